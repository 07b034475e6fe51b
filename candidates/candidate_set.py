"""Per-group partial candidates: pure set algebra over facts the SQL layer loaded.

A *partial candidate* is one way to satisfy one request group, built around
one anchor (a root provider id, allocation-candidates.md §4.1):
``Partial(allocations=((rp, ((rc, amount), ...)), ...), providers=(rp, ...))``:
allocations per provider, as an allocation request shows them, providers by id and
classes by id. A suffixed group's amounts on any provider are one shared tuple.
``group_partials()`` returns ``{anchor: [Partial, ...]}`` in a deterministic
order (anchors by id, providers by id).

Filters only narrow, never add: every rule of §4.2/§4.3 below removes
entries from what the capacity / trait / aggregate facts allow.
"""
from collections import namedtuple
from dataclasses import dataclass, field
from itertools import product

Partial = namedtuple("Partial", "allocations providers")


def by_provider(entries):
    """Allocations in their canonical form, ((rp, ((rc, amount), ...)), ...) sorted, from
    entries (rp, rc, amount) naming each (provider, class) once."""
    per_provider = {}
    for rp, rc, amount in entries:
        per_provider.setdefault(rp, []).append((rc, amount))
    return tuple(sorted((rp, tuple(sorted(pairs))) for rp, pairs in per_provider.items()))


class GroupKind:
    """What kind of request group a group is, for the parsed (request.RequestGroup)
    and the resolved (Group) form alike; AMOUNTS names the field of its amounts."""

    AMOUNTS = "amounts"

    @property
    def suffixed(self):
        return self.suffix != ""

    @property
    def resourceless(self):
        return not getattr(self, self.AMOUNTS)


@dataclass(frozen=True)
class Group(GroupKind):
    """A request group with every name resolved to an id."""

    suffix: str
    amounts: tuple = ()                 # ((rc_id, amount), ...)
    required: tuple = ()                # (frozenset(trait ids), ...) ANDed any-of sets
    forbidden: frozenset = frozenset()  # trait ids
    member_of: tuple = ()               # (frozenset(aggregate ids), ...) ANDed any-of sets
    forbidden_aggregates: frozenset = frozenset()
    in_tree_root: int = None            # root id of the in_tree provider


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
    batch covered the whole database and read them all (else None); tree_rows:
    the rows of every provider of the batch's trees, when read (every_provider for
    the whole database); inventory_groups: the inventories of the batch's trees
    (capacity.inventory_groups pairs) of the requested classes, or of every class when
    every_class; trait_names: rows (rp, trait name) of every trait of the batch's
    providers, when the loader read them with the links (else None); loaded_rows:
    {(rp, rc): (used, total, reserved, allocation_ratio, min_unit, max_unit, step_size)}
    of the requested classes, when the loader was asked to keep them (the explainer's
    numbers).
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
    tree_rows: list = None        # trees.providers rows of the batch's trees, when read
    inventory_groups: list = None   # capacity.inventory_groups of the batch's trees
    every_class: bool = False       # inventory_groups holds every class, not only the requested
    trait_names: list = None        # rows (rp, trait name) of every provider read, when read
    loaded_rows: dict = None      # every inventory row read, when the loader kept them

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
#
# Each rule is one named predicate. Generation applies them (or the set operations built
# from the same sets, see group_filters) and the explainer (candidates/explain/) asks the same
# functions *why* a provider is left out, so an explanation cannot disagree with the answer.

# Why an amount does not fit an inventory (§4.1 "Fits"), in the order they are checked.
MIN_UNIT, MAX_UNIT, STEP_SIZE, CAPACITY = "min_unit", "max_unit", "step_size", "capacity"


def misfit(n, used, usable, min_unit, max_unit, step_size):
    """None if amount n fits an inventory, else the rule it breaks (MIN_UNIT, MAX_UNIT,
    STEP_SIZE or CAPACITY): n fits iff min_unit <= n <= max_unit, n % step_size == 0 and
    used + n <= usable, where usable is providers.rules.capacity() of the inventory."""
    if n < min_unit:
        return MIN_UNIT
    if n > max_unit:
        return MAX_UNIT
    if n % step_size:
        return STEP_SIZE
    if used + n > usable:
        return CAPACITY
    return None


def consolidated_misfit(amount, used, usable, max_unit):
    """None if the sum `amount` of several groups' amounts of one class on one provider
    still fits (§4.4 rule 3: capacity and max_unit only, min_unit and step_size are not
    re-checked on sums), else CAPACITY or MAX_UNIT."""
    if used + amount > usable:
        return CAPACITY
    if amount > max_unit:
        return MAX_UNIT
    return None


# --- same_subtree (§4.4), on MPTT positions (tree_id, lft, rght) ------------------------

def is_ancestor_or_self(position, upper, lower):
    """MPTT: `upper` is `lower` or one of its ancestors."""
    tree_u, lft_u, rght_u = position[upper]
    tree_l, lft_l, rght_l = position[lower]
    return tree_u == tree_l and lft_u <= lft_l and rght_l <= rght_u


def same_subtree_ok(providers, position):
    """|X| = 1, or some provider of X is an ancestor-or-self of all of X."""
    if len(providers) == 2:
        a, b = providers
        return (a == b or is_ancestor_or_self(position, a, b)
                or is_ancestor_or_self(position, b, a))
    distinct = set(providers)
    if len(distinct) <= 1:
        return True
    for top in distinct:
        for other in distinct:
            if other != top and not is_ancestor_or_self(position, top, other):
                break
        else:
            return True
    return False


def in_one_subtree(position, a, b):
    """Is one of providers a, b an ancestor-or-self of the other? (same_subtree for two)"""
    tree_a, lft_a, rght_a = position[a]
    tree_b, lft_b, rght_b = position[b]
    return tree_a == tree_b and ((lft_a <= lft_b and rght_b <= rght_a)
                                 or (lft_b <= lft_a and rght_a <= rght_b))


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


def root_filter(required, forbidden, facts, member_of=(), forbidden_aggregates=frozenset()):
    """root_required (trait ids) and the root_member_of extension (ANDed any-of sets of
    aggregate ids, forbidden aggregate ids) as a predicate on anchor ids (§4.1 "Root
    filter"): only the anchor's own traits and aggregates count."""
    each = [frozenset([t]) for t in required]
    traits_ok = None
    if required or forbidden:
        def traits_ok(root):
            return has_traits(facts.traits_of(root), each, forbidden)
    if not member_of and not forbidden_aggregates:
        return traits_ok or (lambda root: True)
    aggregates = facts.aggregates

    def aggregates_ok(root):
        held = aggregates.get(root, frozenset())
        return (in_aggregates(held, member_of)
                and (not forbidden_aggregates or forbidden_aggregates.isdisjoint(held)))
    if traits_ok is None:
        return aggregates_ok
    return lambda root: traits_ok(root) and aggregates_ok(root)


def holding_any(sets_by_rp, ids):
    """Providers whose set (facts.traits or facts.aggregates) shares an id with `ids`."""
    if not ids:
        return set()
    return {rp for rp, held in sets_by_rp.items() if not ids.isdisjoint(held)}


def group_partials(group, facts, root_ok):
    """{anchor: [Partial]} for one group (§4.2 unsuffixed, §4.3 suffixed/resourceless)."""
    if not group.suffixed:
        return _unsuffixed(group, facts, root_ok)
    if group.resourceless:
        return _single_provider(group, facts, root_ok, _resourceless_providers(group, facts))
    return _single_provider(group, facts, root_ok, _fitting_everything(group, facts))


GroupFilters = namedtuple("GroupFilters", "clause_members in_m in_f bad_traits holders")
GroupFilters.__doc__ = """The provider sets a group's filters of §4.1 select in one batch:
clause_members: per positive member_of clause, the providers in one of its aggregates;
in_m: their intersection M (None without positive member_of); in_f: F, the providers
in a forbidden aggregate; bad_traits: providers having a forbidden trait; holders: per
required any-of set, the providers having one of its traits."""

# Why a provider fails a group's own filters (provider_refusals, entry_refusal).
FORBIDDEN_TRAIT = "forbidden_trait"
MISSING_TRAIT = "missing_trait"
NOT_IN_AGGREGATE = "not_in_aggregate"
FORBIDDEN_AGGREGATE = "forbidden_aggregate"


def group_filters(group, facts):
    """GroupFilters of `group` over the providers `facts` know (computed once per group)."""
    clause_members = tuple(holding_any(facts.aggregates, clause) for clause in group.member_of)
    in_m = None
    for members in clause_members:
        in_m = members if in_m is None else in_m & members
    return GroupFilters(
        clause_members=clause_members,
        in_m=in_m,
        in_f=holding_any(facts.aggregates, group.forbidden_aggregates),
        bad_traits=holding_any(facts.traits, group.forbidden),
        holders=tuple(holding_any(facts.traits, names) for names in group.required),
    )


def provider_refusals(rp, filters):
    """Why provider rp fails a group's filters on its own (§4.3), from the same sets
    _passing() subtracts: a list of (FORBIDDEN_TRAIT, None), (FORBIDDEN_AGGREGATE, None),
    (NOT_IN_AGGREGATE, clause index), (MISSING_TRAIT, required set index); empty if it
    passes."""
    found = []
    if rp in filters.bad_traits:
        found.append((FORBIDDEN_TRAIT, None))
    if rp in filters.in_f:
        found.append((FORBIDDEN_AGGREGATE, None))
    for index, members in enumerate(filters.clause_members):
        if rp not in members:
            found.append((NOT_IN_AGGREGATE, index))
    for index, held in enumerate(filters.holders):
        if rp not in held:
            found.append((MISSING_TRAIT, index))
    return found


def entry_refusal(rp, own_root, anchor, filters):
    """Why provider rp (of the tree rooted at own_root), which fits an amount of the
    unsuffixed group, is not an eligible entry for `anchor` (§4.2), or None: it has a
    forbidden trait; positive member_of holds neither for rp nor for the anchor root of
    rp's own tree (an aggregate on a root spans its own tree only); rp or the anchor is
    in a forbidden aggregate."""
    if rp in filters.bad_traits:
        return FORBIDDEN_TRAIT
    in_m = filters.in_m
    if in_m is not None and rp not in in_m and (own_root != anchor or anchor not in in_m):
        return NOT_IN_AGGREGATE
    in_f = filters.in_f
    if in_f and (rp in in_f or anchor in in_f):
        return FORBIDDEN_AGGREGATE
    return None


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
    by_class = tuple(sorted(group.amounts))
    roots, sharing, holds_root = facts.root, facts.sharing, facts.holds_root
    for rp in sorted(eligible):
        if use_tree and roots[rp] != group.in_tree_root:
            continue
        # a resourceless group's partial maps a provider and allocates nothing
        partial = Partial(((rp, by_class),) if by_class else (), (rp,))
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


def _passing(providers, group, facts, filters=None):
    """The set of `providers` that pass the group's filters of §4.1 on their own (no
    forbidden trait, in M, not in F, every required any-of set), by set operations
    rather than provider by provider: exactly those without provider_refusals().
    filters: group_filters(group, facts)."""
    filters = filters or group_filters(group, facts)
    passing = set(providers)
    passing -= filters.bad_traits
    if filters.in_f:
        passing -= filters.in_f
    if filters.in_m is not None:
        passing &= filters.in_m
    for held in filters.holders:
        passing &= held
    return passing


def entry_anchors(rp, facts, tree_root):
    """The anchors of this batch for which provider rp (fitting an amount) may supply the
    unsuffixed group (§4.2): a sharing provider serves each of its anchors unless in_tree
    is given; any other provider (and a sharing one under in_tree) only its own root,
    which must be the in_tree root (`tree_root`) when in_tree is given."""
    own_root = facts.root[rp]
    if rp in facts.sharing and tree_root is None:
        return facts.anchors(rp)
    if not facts.holds_root(own_root) or (tree_root is not None and own_root != tree_root):
        return ()
    return (own_root,)


def _unsuffixed(group, facts, root_ok):
    """The unsuffixed group: classes may come from several providers of one tree or
    sharing providers; traits are satisfied collectively by the chosen ones (§4.2)."""
    filters = group_filters(group, facts)
    tree_root = group.in_tree_root
    sharing = facts.sharing
    holds_root = facts.holds_root
    roots = facts.root
    count = len(group.amounts)
    result = {}
    rcs = [rc for rc, _ in group.amounts]
    amounts = [n for _, n in group.amounts]
    by_class = tuple(sorted(group.amounts))
    required = group.required
    traits_of = facts.traits_of
    fits = [facts.fits.get(key, ()) for key in group.amounts]

    # Anchors whose tree is a lone root that no sharing provider reaches can only be
    # served by the root alone: settle all of them with set operations.
    complex_anchors = {roots[rp] for rp in set().union(*fits) if roots[rp] != rp}
    for rp in sharing:
        complex_anchors.update(facts.anchors(rp))
    lone = set(fits[0]).intersection(*fits[1:]) if fits else set()
    lone -= complex_anchors
    lone -= sharing
    lone = _passing(lone, group, facts, filters)
    if tree_root is not None:
        lone &= {tree_root}
    for rp in lone:
        if roots[rp] != rp or not holds_root(rp) or not root_ok(rp):
            continue
        result[rp] = [Partial(((rp, by_class),), (rp,))]

    filtered = bool(filters.bad_traits or filters.in_m is not None or filters.in_f)
    entries = {}      # anchor -> [[rp, ...] per class]
    for index, rps in enumerate(fits if complex_anchors or sharing else ()):
        for rp in rps:
            own_root = roots[rp]
            if own_root not in complex_anchors and rp not in sharing:
                continue  # settled above
            for anchor in entry_anchors(rp, facts, tree_root):
                if filtered and entry_refusal(rp, own_root, anchor, filters) is not None:
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
            result[anchor] = [Partial(((first, by_class),), (first,))]
            continue
        if all(len(e) == 1 for e in per_class):
            choices = (tuple(e[0] for e in per_class),)
        else:
            choices = product(*per_class)
        partials = []
        for choice in choices:
            chosen = tuple(sorted(set(choice)))
            if required and not has_required(traits_of_all(facts, chosen), required):
                continue
            partials.append(Partial(by_provider(zip(choice, rcs, amounts)), chosen))
        if partials:
            result[anchor] = partials
    return {anchor: result[anchor] for anchor in sorted(result)}


def traits_of_all(facts, rps):
    """The traits the providers `rps` hold together (§4.2: required traits of the
    unsuffixed group may be spread over the chosen providers)."""
    if len(rps) == 1:
        return facts.traits_of(rps[0])
    return set().union(*(facts.traits_of(rp) for rp in rps))
