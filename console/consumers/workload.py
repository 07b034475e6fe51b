"""What a move changes for the workload: the traits and aggregates of the source tree
against each target's tree (the move pickers of the consumer page).

A tree's traits and aggregates are those of any of its providers (the host's
HW_CPU_X86_AVX2, its NUMA nodes' HW_NUMA_ROOT, the host's aggregates, which are its
availability zone in nova). Moving allocations changes neither the target's nor what
the instance was scheduled for: a target without a trait or aggregate the source has
may break what the flavor or image asked for. One query for any number of trees.
"""
from dataclasses import dataclass, field

from django.db.models import CharField, Count, Q, Value

from providers.models import ProviderAggregate, ProviderTrait


@dataclass
class Membership:
    """The traits (names) and aggregates (uuids) of one tree."""

    traits: set = field(default_factory=set)
    aggregates: set = field(default_factory=set)

    @property
    def trait_list(self):
        return sorted(self.traits)

    @property
    def aggregate_list(self):
        return sorted(self.aggregates)


@dataclass
class Difference:
    """What a target's tree lacks and adds against the source's (sorted lists)."""

    missing_traits: list
    extra_traits: list
    missing_aggregates: list
    extra_aggregates: list

    @property
    def has_everything(self):
        return not (self.missing_traits or self.missing_aggregates)

    @property
    def same(self):
        return self.has_everything and not (self.extra_traits or self.extra_aggregates)


def tree_memberships(root_ids):
    """{root id: Membership} of the trees `root_ids`; one query (a UNION of the trees'
    traits and aggregates)."""
    trees = {root_id: Membership() for root_id in root_ids}
    if not trees:
        return trees
    traits = (ProviderTrait.objects.filter(provider__root_id__in=list(trees))
              .annotate(kind=Value("t", output_field=CharField()))
              .values_list("provider__root_id", "trait__name", "kind"))
    aggregates = (ProviderAggregate.objects.filter(provider__root_id__in=list(trees))
                  .annotate(kind=Value("a", output_field=CharField()))
                  .values_list("provider__root_id", "aggregate__uuid", "kind"))
    for root_id, value, kind in traits.union(aggregates):   # UNION: duplicates go
        (trees[root_id].traits if kind == "t" else trees[root_id].aggregates).add(value)
    return trees


def difference(source, target):
    """The Difference of Membership `target` against Membership `source`."""
    return Difference(sorted(source.traits - target.traits),
                      sorted(target.traits - source.traits),
                      sorted(source.aggregates - target.aggregates),
                      sorted(target.aggregates - source.aggregates))


def has_everything_q(source, *, root="root_id"):
    """Q on rows whose tree (the root id at `root`) has every trait and aggregate of
    Membership `source`: one grouped subquery for the traits and one for the
    aggregates, no list of ids. Not one subquery a name: MariaDB flattens each into a
    semi-join of three tables, and planning the join of a tree with four traits and an
    aggregate (25 tables) took it 27 s."""
    wanted = Q()
    if source.traits:
        wanted &= Q(**{f"{root}__in": _trees_with_all(
            ProviderTrait.objects.filter(trait__name__in=source.traits), "trait",
            len(source.traits))})
    if source.aggregates:
        wanted &= Q(**{f"{root}__in": _trees_with_all(
            ProviderAggregate.objects.filter(aggregate__uuid__in=source.aggregates),
            "aggregate", len(source.aggregates))})
    return wanted


def _trees_with_all(links, what, count):
    """The root ids of the trees holding `count` distinct `what` among `links`."""
    return (links.values("provider__root_id")
            .annotate(found=Count(what, distinct=True)).filter(found=count)
            .values("provider__root_id"))
