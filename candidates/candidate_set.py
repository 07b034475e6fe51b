"""Per-group partial candidates: pure set algebra over facts the SQL layer loaded.

A *partial candidate* is one way to satisfy one request group, built around
one anchor (a root provider id, allocation-candidates.md §4.1):
``Partial(allocations=(((rp, rc), amount), ...), providers=(rp, ...))``.
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
    inventory: (rp, rc) -> (used, total, reserved, allocation_ratio, max_unit);
    traits / aggregates: rp -> set of the request's trait / aggregate ids;
    sharing: ids of sharing providers; sharing_anchors: rp -> anchor roots in
    this batch besides its own root; holds_root(root) -> is the root an
    anchor of this batch; every_provider: the rows of every provider when the
    batch covered the whole database and read them all (else None).
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
    every_provider: list = None   # trees.providers rows, when the batch read them all
    inventory_rows: list = None   # capacity.inventories rows of a whole-database batch

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


# --- the filters of §4.1, on one provider (or set of providers) ---------------------------


def meets_every(clauses, held):
    """`held` shares at least one id with every clause (an any-of set of ids)."""
    return all(not clause.isdisjoint(held) for clause in clauses)


def has_required(traits, required):
    """At least one trait of every required any-of set (traits: of one provider, or the
    union over the providers of an unsuffixed group's choice)."""
    return meets_every(required, traits)


def has_traits(traits, required, forbidden):
    """has_required, and none of the forbidden traits."""
    if forbidden and not forbidden.isdisjoint(traits):
        return False
    return has_required(traits, required)


def in_aggregates(aggregates, member_of):
    """Member of at least one aggregate of every clause (the set M of §4.1)."""
    return meets_every(member_of, aggregates)


def root_filter(required, forbidden, facts):
    """root_required as a predicate on anchor ids (§4.1 "Root filter")."""
    if not required and not forbidden:
        return lambda root: True
    each = [frozenset([t]) for t in required]
    return lambda root: has_traits(facts.traits_of(root), each, forbidden)


def holding_any(sets_by_rp, ids):
    """Providers whose set (facts.traits or facts.aggregates) shares an id with `ids`."""
    if not ids:
        return set()
    return {rp for rp, held in sets_by_rp.items() if not ids.isdisjoint(held)}


def group_partials(group, facts, root_ok):
    """{anchor: [Partial]} for one group (§4.2 unsuffixed, §4.3 suffixed/resourceless).

    Partial.allocations is canonical: ``(((rp, rc), amount), ...)`` sorted.
    """
    if not group.suffixed:
        return _unsuffixed(group, facts, root_ok)
    if group.resourceless:
        return _single_provider(group, facts, root_ok, _resourceless_providers(group, facts))
    return _single_provider(group, facts, root_ok, _fitting_everything(group, facts))


def _member_sets(group, facts):
    """(providers in M or None when no positive member_of, providers in F,
    providers having a forbidden trait), computed once per group."""
    in_m = None
    for clause in group.member_of:
        members = holding_any(facts.aggregates, clause)
        in_m = members if in_m is None else in_m & members
    in_f = holding_any(facts.aggregates, group.forbidden_aggregates)
    bad_traits = holding_any(facts.traits, group.forbidden)
    return in_m, in_f, bad_traits


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
        return sorted(holding_any(facts.traits, group.required[0]))
    if group.member_of:
        return sorted(holding_any(facts.aggregates, group.member_of[0]))
    return []


def _single_provider(group, facts, root_ok, providers):
    """Suffixed groups: one provider satisfies the whole group (§4.3)."""
    result = {}
    eligible = _passing(providers, group, facts)
    use_tree = group.in_tree_root is not None and not group.resourceless
    by_class = sorted(group.amounts)
    roots, sharing, holds_root = facts.root, facts.sharing, facts.holds_root
    for rp in sorted(eligible):
        if use_tree and roots[rp] != group.in_tree_root:
            continue
        partial = Partial(tuple([((rp, rc), n) for rc, n in by_class]), (rp,))
        if rp in sharing:
            for anchor in facts.anchors(rp):
                if root_ok(anchor):
                    result.setdefault(anchor, []).append(partial)
        else:
            anchor = roots[rp]
            if holds_root(anchor) and root_ok(anchor):
                found = result.get(anchor)
                if found is None:
                    result[anchor] = [partial]
                else:
                    found.append(partial)
    return {anchor: result[anchor] for anchor in sorted(result)}


def _passing(providers, group, facts, member_sets=None):
    """The set of `providers` that pass the group's filters of §4.1 on their own (no
    forbidden trait, in M, not in F, every required any-of set), by set operations
    rather than provider by provider. member_sets: _member_sets(group, facts)."""
    in_m, in_f, bad_traits = member_sets or _member_sets(group, facts)
    passing = set(providers)
    passing -= bad_traits
    if in_f:
        passing -= in_f
    if in_m is not None:
        passing &= in_m
    for names in group.required:
        passing &= holding_any(facts.traits, names)
    return passing


def _unsuffixed(group, facts, root_ok):
    """The unsuffixed group: classes may come from several providers of one tree or
    sharing providers; traits are satisfied collectively by the chosen ones (§4.2)."""
    in_m, in_f, bad_traits = _member_sets(group, facts)
    tree_root = group.in_tree_root
    sharing = facts.sharing
    holds_root = facts.holds_root
    roots = facts.root
    count = len(group.amounts)
    result = {}
    rcs = [rc for rc, _ in group.amounts]
    amounts = [n for _, n in group.amounts]
    by_class = sorted(zip(rcs, amounts))
    required = group.required
    traits_of = facts.traits_of
    fits = [facts.fits.get(key, ()) for key in group.amounts]

    # Anchors whose tree is a lone root that no sharing provider reaches can only be
    # served by the root alone: settle all of them with set operations.
    complex_anchors = {roots[rp] for rps in fits for rp in rps if roots[rp] != rp}
    for rp in sharing:
        complex_anchors.update(facts.anchors(rp))
    lone = set(fits[0]).intersection(*fits[1:]) if fits else set()
    lone -= complex_anchors
    lone -= sharing
    lone = _passing(lone, group, facts, (in_m, in_f, bad_traits))
    if tree_root is not None:
        lone &= {tree_root}
    for rp in lone:
        if roots[rp] != rp or not holds_root(rp) or not root_ok(rp):
            continue
        result[rp] = [Partial(tuple([((rp, rc), n) for rc, n in by_class]), (rp,))]

    entries = {}      # anchor -> [[rp, ...] per class]
    for index, rps in enumerate(fits if complex_anchors or sharing else ()):
        for rp in rps:
            own_root = roots[rp]
            if own_root not in complex_anchors and rp not in sharing:
                continue  # settled above
            if rp in bad_traits:
                continue  # a chosen provider must have none of the forbidden traits
            if rp in sharing and tree_root is None:
                anchors = facts.anchors(rp)
            elif not holds_root(own_root) or (tree_root is not None and own_root != tree_root):
                # only the in_tree tree, and no sharing from other trees
                continue
            else:
                anchors = (own_root,)
            for anchor in anchors:
                if in_m is not None and rp not in in_m and (own_root != anchor
                                                            or anchor not in in_m):
                    continue  # an aggregate on the anchor root spans its own tree only
                if in_f and (rp in in_f or anchor in in_f):
                    continue
                per_class = entries.get(anchor)
                if per_class is None:
                    per_class = entries[anchor] = [[] for _ in range(count)]
                per_class[index].append(rp)
    for anchor in entries:
        per_class = entries[anchor]
        if not all(per_class) or not root_ok(anchor):
            continue
        first = per_class[0][0]
        if all(len(e) == 1 and e[0] == first for e in per_class):
            # the common case: one provider has everything
            if required and not has_required(traits_of(first), required):
                continue
            result[anchor] = [Partial(tuple(((first, rc), n) for rc, n in by_class), (first,))]
            continue
        if all(len(e) == 1 for e in per_class):
            choices = (tuple(e[0] for e in per_class),)
        else:
            choices = product(*per_class)
        partials = []
        for choice in choices:
            chosen = tuple(sorted(set(choice)))
            if required and not has_required(_traits_of_all(facts, chosen), required):
                continue
            partials.append(Partial(
                tuple(sorted(((rp, rc), n) for rp, rc, n in zip(choice, rcs, amounts))),
                chosen))
        if partials:
            result[anchor] = partials
    return {anchor: result[anchor] for anchor in sorted(result)}


def _traits_of_all(facts, rps):
    """The traits the providers `rps` hold together (§4.2: required traits of the
    unsuffixed group may be spread over the chosen providers)."""
    if len(rps) == 1:
        return facts.traits_of(rps[0])
    return set().union(*(facts.traits_of(rp) for rp in rps))
