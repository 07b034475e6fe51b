"""Per-group partial candidates: pure set algebra over facts the SQL layer loaded.

A *partial candidate* is one way to satisfy one request group, built around
one anchor (a root provider id, allocation-candidates.md §4.1):
``Partial(allocations=((rp, rc, amount), ...), providers=(rp, ...))``.
``group_partials()`` returns ``{anchor: [Partial, ...]}`` in a deterministic
order (anchors by id, providers by id).

Filters only narrow, never add: every rule of §4.2/§4.3 below removes
entries from what the capacity / trait / aggregate facts allow.
"""
from collections import namedtuple
from dataclasses import dataclass, field
from itertools import product

Partial = namedtuple("Partial", "allocations providers")


@dataclass(frozen=True)
class Group:
    """A request group with every name resolved to an id."""

    suffix: str
    amounts: tuple = ()                 # ((rc_id, amount), ...)
    required: tuple = ()                # (frozenset(trait ids), ...) ANDed any-of sets
    forbidden: frozenset = frozenset()  # trait ids
    member_of: tuple = ()               # (frozenset(aggregate ids), ...) ANDed any-of sets
    forbidden_aggregates: frozenset = frozenset()
    in_tree_root: int = None            # root id of the in_tree provider

    @property
    def suffixed(self):
        return self.suffix != ""

    @property
    def resourceless(self):
        return not self.amounts


@dataclass
class Facts:
    """What the SQL layer found about the providers of one batch of anchors.

    root/position: rp -> root id / (tree_id, lft, rght);
    fits: (rc, amount) -> [rp, ...] providers where the amount fits;
    inventory: (rp, rc) -> (used, capacity, max_unit);
    traits / aggregates: rp -> set of the request's trait / aggregate ids;
    sharing: ids of sharing providers; sharing_anchors: rp -> anchor roots in
    this batch besides its own root; holds_root(root) -> is the root an
    anchor of this batch.
    """

    holds_root: object
    root: dict = field(default_factory=dict)
    position: dict = field(default_factory=dict)
    fits: dict = field(default_factory=dict)
    inventory: dict = field(default_factory=dict)
    traits: dict = field(default_factory=dict)
    aggregates: dict = field(default_factory=dict)
    sharing: set = field(default_factory=set)
    sharing_anchors: dict = field(default_factory=dict)

    def anchors(self, rp):
        """Anchors in this batch a provider may serve: its root, plus more if sharing."""
        root = self.root[rp]
        found = [root] if self.holds_root(root) else []
        if rp in self.sharing:
            found.extend(a for a in self.sharing_anchors.get(rp, ()) if a != root)
        return found

    _NONE = frozenset()

    def traits_of(self, rp):
        return self.traits.get(rp, self._NONE)

    def aggregates_of(self, rp):
        return self.aggregates.get(rp, self._NONE)


def has_traits(traits, required, forbidden):
    """At least one trait of every required any-of set, and none of the forbidden."""
    if forbidden and not forbidden.isdisjoint(traits):
        return False
    return all(not names.isdisjoint(traits) for names in required)


def in_aggregates(aggregates, member_of):
    """Member of at least one aggregate of every clause (the set M of §4.1)."""
    return all(not clause.isdisjoint(aggregates) for clause in member_of)


def root_filter(required, forbidden, facts):
    """root_required as a predicate on anchor ids (§4.1 "Root filter")."""
    if not required and not forbidden:
        return lambda root: True
    return lambda root: has_traits(facts.traits_of(root), [frozenset([t]) for t in required],
                                   forbidden)


def group_partials(group, facts, root_ok):
    """{anchor: [Partial]} for one group (§4.2 unsuffixed, §4.3 suffixed/resourceless)."""
    if not group.suffixed:
        return _unsuffixed(group, facts, root_ok)
    if group.resourceless:
        return _single_provider(group, facts, root_ok, _resourceless_providers(group, facts))
    return _single_provider(group, facts, root_ok, _fitting_everything(group, facts))


def _fitting_everything(group, facts):
    """Providers to which every amount of the group fits, in id order."""
    fitting = None
    for key in group.amounts:
        here = facts.fits.get(key, ())
        fitting = set(here) if fitting is None else fitting.intersection(here)
        if not fitting:
            return []
    return sorted(fitting)


def _resourceless_providers(group, facts):
    """Providers that may satisfy a resourceless group; Quirk Q5: none without a positive
    filter (in_tree is ignored for resourceless groups)."""
    if group.required:
        first = group.required[0]
        return sorted(rp for rp, traits in facts.traits.items() if not first.isdisjoint(traits))
    if group.member_of:
        first = group.member_of[0]
        return sorted(rp for rp, aggs in facts.aggregates.items() if not first.isdisjoint(aggs))
    return []


def _single_provider(group, facts, root_ok, providers):
    """Suffixed groups: one provider satisfies the whole group (§4.3)."""
    result = {}
    use_tree = group.in_tree_root is not None and not group.resourceless
    allocations_for = tuple(group.amounts)
    for rp in providers:
        if use_tree and facts.root[rp] != group.in_tree_root:
            continue
        if not has_traits(facts.traits_of(rp), group.required, group.forbidden):
            continue
        aggregates = facts.aggregates_of(rp)
        if group.member_of and not in_aggregates(aggregates, group.member_of):
            continue
        if group.forbidden_aggregates and not group.forbidden_aggregates.isdisjoint(aggregates):
            continue
        partial = Partial(tuple((rp, rc, n) for rc, n in allocations_for), (rp,))
        for anchor in facts.anchors(rp):
            if root_ok(anchor):
                result.setdefault(anchor, []).append(partial)
    return {anchor: result[anchor] for anchor in sorted(result)}


def _unsuffixed(group, facts, root_ok):
    """The unsuffixed group: classes may come from several providers of one tree or
    sharing providers; traits are satisfied collectively by the chosen ones (§4.2)."""
    entries = {}      # anchor -> [[rp, ...] per class]
    count = len(group.amounts)
    for index, key in enumerate(group.amounts):
        for rp in facts.fits.get(key, ()):
            if group.forbidden and not group.forbidden.isdisjoint(facts.traits_of(rp)):
                continue  # a chosen provider must have none of the forbidden traits
            own_root = facts.root[rp]
            if group.in_tree_root is not None:
                # only the in_tree tree, and no sharing from other trees
                anchors = [own_root] if (own_root == group.in_tree_root
                                         and facts.holds_root(own_root)) else []
            else:
                anchors = facts.anchors(rp)
            for anchor in anchors:
                if not _entry_allowed(group, facts, rp, anchor, own_root):
                    continue
                per_class = entries.get(anchor)
                if per_class is None:
                    per_class = entries[anchor] = [[] for _ in range(count)]
                per_class[index].append(rp)
    result = {}
    rcs = [rc for rc, _ in group.amounts]
    amounts = [n for _, n in group.amounts]
    for anchor in sorted(entries):
        per_class = entries[anchor]
        if not all(per_class) or not root_ok(anchor):
            continue
        partials = []
        for choice in product(*(sorted(set(e)) for e in per_class)):
            chosen = sorted(set(choice))
            if group.required:
                traits = set()
                for rp in chosen:
                    traits |= facts.traits_of(rp)
                if not all(not names.isdisjoint(traits) for names in group.required):
                    continue
            partials.append(Partial(
                tuple(zip(choice, rcs, amounts)), tuple(chosen)))
        if partials:
            result[anchor] = partials
    return result


def _entry_allowed(group, facts, rp, anchor, own_root):
    """member_of / forbidden aggregates for an entry of the unsuffixed group (§4.2)."""
    if group.member_of:
        if not in_aggregates(facts.aggregates_of(rp), group.member_of):
            # an aggregate on the anchor root spans its tree, not sharing providers
            if own_root != anchor or not in_aggregates(facts.aggregates_of(anchor),
                                                       group.member_of):
                return False
    if group.forbidden_aggregates:
        if (not group.forbidden_aggregates.isdisjoint(facts.aggregates_of(rp))
                or not group.forbidden_aggregates.isdisjoint(facts.aggregates_of(anchor))):
            return False
    return True
