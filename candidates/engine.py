"""The allocation candidates engine: orchestration only.

``find_candidates(query, ...)`` takes a request.CandidateQuery and returns a
Result (candidates + the data provider_summaries need). It

1. resolves names (resolve.py); if any name is unknown it replays
   Placement's lazy evaluation order (§3.6) to decide between a 400 and an
   empty answer;
2. walks anchors (root providers) in ascending id order, in batches of
   root-id ranges that double in size; for each batch it loads the facts
   with a constant number of set-based queries (sql/), computes every
   group's partial candidates (candidate_set.py) and combines them
   (combine.py), stopping as soon as it has the candidates it needs. Without
   a limit there is one batch: the whole database;
3. applies limit / randomisation and loads the provider summaries.

It never sees a microversion: request.py turned those into flags.
"""
import random
from dataclasses import dataclass, field

from providers.exceptions import InvalidQuery
from candidates import candidate_set, combine
from candidates.resolve import resolve
from candidates.sql import Scope, aggregates as agg_sql, capacity, summaries, traits as trait_sql
from candidates.sql import trees

FIRST_BATCH_ROOT_IDS = 64


@dataclass
class Result:
    """candidates: [(allocations, mappings)] (see combine.py);
    providers: trees.providers rows of the summarised providers;
    inventories: capacity.inventories rows of their inventories;
    traits: rows (rp id, trait name), None when summaries show no traits;
    uuids: rp id -> uuid for every provider the candidates mention;
    class_names: rc id -> name of every class in candidates and inventories."""

    candidates: list = field(default_factory=list)
    providers: list = field(default_factory=list)
    inventories: list = field(default_factory=list)
    traits: list = None
    uuids: dict = field(default_factory=dict)
    class_names: dict = field(default_factory=dict)


def find_candidates(query, *, whole_trees=True, all_classes=True, with_traits=True,
                    randomize=False, max_candidates=-1, breadth_first=False):
    """Evaluate a CandidateQuery.

    whole_trees: summaries cover every provider of the trees involved (1.29+),
    else only providers in allocations; all_classes: summaries show every class
    (1.27+), else only the requested ones; with_traits: summaries list traits.
    randomize / max_candidates: the [placement] options of the same names;
    breadth_first: allocation_candidates_generation_strategy = breadth-first.
    Raises InvalidQuery for unknown resource classes or traits (when reached).
    """
    names = resolve(query)
    if _unknown_names(query, names):
        _lazy_check(query, names)
        return Result()
    groups = [_compile(group, names) for group in query.groups]
    if any(group is None for group in groups):
        return Result()

    limit = query.limit
    drop_same_tree = not query.nested_aware and trees.any_provider_has_parent()
    cap = max_candidates if max_candidates is not None and max_candidates >= 0 else None
    # Below 1.29 with trees in the database, the summaries of a limited answer also show
    # providers of the candidates left out (§4.7), so every candidate is generated.
    if not randomize and limit is not None and not drop_same_tree:
        cap = limit if cap is None else min(cap, limit)
    found, roots, whole = _generate(query, groups, names, cap, drop_same_tree, breadth_first)
    generated = found
    if randomize:
        if limit is not None and limit < len(found):
            found = random.sample(found, limit)
        else:
            random.shuffle(found)
    elif limit is not None:
        found = found[:limit]
    if not found:
        return Result()
    return _with_summaries(found, generated, roots, whole, query, names, whole_trees,
                           all_classes, with_traits)


# --- names -----------------------------------------------------------------------------


def _unknown_names(query, names):
    if (query.root_required | query.root_forbidden) - names.traits.keys():
        return True
    for group in query.groups:
        if any(name not in names.classes for name, _ in group.resources):
            return True
        if group.traits.names() - names.traits.keys():
            return True
    return False


def _no_such_traits(missing):
    return InvalidQuery(f"No such trait(s): {', '.join(sorted(missing))}.")


def _compile(group, names):
    """A request.RequestGroup with ids, or None when it can match nothing (unknown
    aggregate in a positive clause, in_tree provider that does not exist)."""
    clauses = []
    for clause in group.aggregates.any_of:
        ids = frozenset(names.aggregates[a] for a in clause if a in names.aggregates)
        if not ids:
            return None
        clauses.append(ids)
    in_tree_root = None
    if group.in_tree:
        # a missing in_tree provider empties the answer even for a resourceless group,
        # which otherwise ignores in_tree (§3.6, Quirk Q5)
        in_tree_root = names.providers.get(group.in_tree)
        if in_tree_root is None:
            return None
        if group.resourceless:
            in_tree_root = None
    traits = names.traits
    return candidate_set.Group(
        suffix=group.suffix,
        amounts=tuple((names.classes[name], n) for name, n in group.resources),
        required=tuple(frozenset(traits[t] for t in names_) for names_ in group.required_sets),
        forbidden=frozenset(traits[t] for t in group.forbidden),
        member_of=tuple(clauses),
        forbidden_aggregates=frozenset(names.aggregates[a] for a in group.aggregates.forbidden
                                       if a in names.aggregates),
        in_tree_root=in_tree_root,
    )


def _lazy_check(query, names):
    """Some name is unknown: raise its 400, unless an earlier step proves there is no
    candidate at all (Quirk Q4), in which case return (the answer is empty)."""
    missing = (query.root_required | query.root_forbidden) - names.traits.keys()
    if missing:
        raise _no_such_traits(missing)
    sharing = _sharing_providers(names)
    root_ok = _global_root_filter(query, names)
    if root_ok is None:
        return
    for group in query.groups:
        for name, _ in group.resources:
            if name not in names.classes:
                raise InvalidQuery("Invalid resource class in resources parameter: "
                                 f"No such resource class {name}.")
        if group.aggregates.any_of:
            clauses = [frozenset(names.aggregates[a] for a in clause if a in names.aggregates)
                       for clause in group.aggregates.any_of]
            if not all(clauses):
                return
            members = {}
            for rp, agg, *_ in agg_sql.provider_aggregates(set().union(*clauses),
                                                           Scope.everything()):
                members.setdefault(rp, set()).add(agg)
            if not any(candidate_set.in_aggregates(aggs, clauses) for aggs in members.values()):
                return
        missing = group.traits.names() - names.traits.keys()
        if missing:
            raise _no_such_traits(missing)
        compiled = _compile(group, names)
        if compiled is None:
            return
        scope = (Scope.tree(compiled.in_tree_root) if compiled.in_tree_root is not None
                 else Scope.everything())
        for key in compiled.amounts:
            if not capacity.providers_with_capacity([key], scope)[key]:
                return
        facts = _load_facts(Scope.everything(), [compiled], query, names, sharing)
        if not candidate_set.group_partials(compiled, facts, root_ok):
            return


def _global_root_filter(query, names):
    """root_required over the whole database: a predicate, or None if no root passes."""
    if not (query.root_required or query.root_forbidden):
        return lambda root: True
    required = frozenset(names.traits[t] for t in query.root_required)
    forbidden = frozenset(names.traits[t] for t in query.root_forbidden)
    facts = candidate_set.Facts(holds_root=lambda root: True)
    _add_rows(facts.traits, trait_sql.provider_traits(required | forbidden, Scope.everything()))
    root_ok = candidate_set.root_filter(required, forbidden, facts)
    if not any(root_ok(root) for root in trees.root_ids()):
        return None
    return root_ok


# --- generation -------------------------------------------------------------------------


def _sharing_providers(names):
    """Ids of every sharing provider."""
    return trait_sql.providers_with_trait(names.sharing_trait_id)


def _generate(query, groups, names, cap, drop_same_tree, breadth_first):
    """Distinct candidates in anchor order (breadth_first: one per anchor in turn), at
    most `cap` (None: all); rp -> root; and the Facts of the batch when one batch read
    the whole database (else None).
    drop_same_tree: below 1.29, drop candidates using two providers of one tree."""
    sharing = _sharing_providers(names)
    unsuffixed_tree = next((g.in_tree_root for g in groups
                            if not g.suffixed and g.in_tree_root is not None), None)
    found, seen, roots = [], set(), {}
    whole = None
    # taking turns between anchors needs all of them in one batch
    for scope in _scopes(None if breadth_first else cap, unsuffixed_tree):
        facts = _load_facts(scope, groups, query, names, sharing)
        roots.update(facts.root)
        whole = facts if facts.every_provider is not None else None
        root_ok = candidate_set.root_filter(
            frozenset(names.traits[t] for t in query.root_required),
            frozenset(names.traits[t] for t in query.root_forbidden), facts)
        partials = []
        for group in groups:
            per_anchor = candidate_set.group_partials(group, facts, root_ok)
            if not per_anchor:
                break
            partials.append(per_anchor)
        else:
            # Only candidates built purely from sharing providers can repeat under
            # several anchors; without sharing providers there is nothing to dedupe.
            dedupe = bool(facts.sharing)
            for candidate in combine.candidates(groups, partials, facts, query.isolate,
                                                query.same_subtree, drop_same_tree,
                                                breadth_first):
                if dedupe:
                    if candidate in seen:
                        continue
                    seen.add(candidate)
                found.append(candidate)
                if cap is not None and len(found) >= cap:
                    return found, roots, whole
    return found, roots, whole


def _scopes(cap, tree_root):
    """Batches of anchors: all at once without a cap, else growing root-id ranges."""
    if tree_root is not None:
        yield Scope.tree(tree_root)
        return
    if cap is None:
        yield Scope.everything()
        return
    low, high = trees.root_id_bounds()
    if low is None:
        return
    size = max(FIRST_BATCH_ROOT_IDS, cap * 2)
    if low + size > high:
        yield Scope.everything()   # one batch would cover every root anyway
        return
    start = low
    while start <= high:
        yield Scope.roots_between(start, start + size)
        start += size
        size *= 2


# Below this many providers of interest, the whole-database batch looks them up by id;
# above it, reading the provider table once is cheaper than a long id list.
LOOKUP_BY_ID_UP_TO = 200


def _load_facts(scope, groups, query, names, sharing_ids):
    """Facts about the providers of `scope` plus every sharing provider."""
    facts = candidate_set.Facts(holds_root=scope.holds_root)
    amounts = {key for group in groups for key in group.amounts}
    trait_ids = {names.traits[t] for t in query.root_required | query.root_forbidden}
    aggregate_ids = set()
    for group in groups:
        for names_ in group.required:
            trait_ids |= names_
        trait_ids |= group.forbidden
        for clause in group.member_of:
            aggregate_ids |= clause
        aggregate_ids |= group.forbidden_aggregates
    scopes = [scope]
    if sharing_ids:
        scopes.append(Scope.providers(sharing_ids))
        facts.sharing = set(sharing_ids)
    fits, inventory = {}, facts.inventory
    want_inventory = len(groups) > 1   # only consolidation across groups needs it
    class_ids = {rc for rc, _ in amounts}
    for where in scopes:
        rows = capacity.inventories(where, rc_ids=class_ids)
        if where.kind == "all":
            facts.inventory_rows = rows
        for key, rps in capacity.fitting(amounts, rows).items():
            fits.setdefault(key, []).extend(rps)
        if want_inventory:
            for rp, rc, used, total, reserved, ratio, _, max_unit, _ in rows:
                inventory[(rp, rc)] = (used, total, reserved, ratio, max_unit)
        if trait_ids:
            _add_rows(facts.traits, trait_sql.provider_traits(trait_ids, where))
        if aggregate_ids:
            _add_rows(facts.aggregates, agg_sql.provider_aggregates(aggregate_ids, where))
    if sharing_ids:
        # a sharing provider inside the scope was seen twice
        facts.fits = {key: sorted(set(rps)) for key, rps in fits.items()}
        for rp, anchor in agg_sql.sharing_anchor_roots(sharing_ids, scope):
            facts.sharing_anchors.setdefault(rp, set()).add(anchor)
    else:
        facts.fits = {key: sorted(rps) for key, rps in fits.items()}
    _add_positions(facts, scopes, want_positions=bool(query.same_subtree))
    return facts


def _add_positions(facts, scopes, want_positions):
    """Root (and MPTT position) of every provider the facts mention."""
    root, position = facts.root, facts.position
    for scope in scopes:
        if scope.kind == "all":
            mentioned = set(facts.traits)
            mentioned.update(facts.aggregates)
            for rps in facts.fits.values():
                mentioned.update(rps)
            if len(mentioned) <= LOOKUP_BY_ID_UP_TO:
                rows = trees.providers(Scope.providers(sorted(mentioned)))
            else:
                rows = facts.every_provider = trees.providers(scope)
        else:
            rows = trees.providers(scope)
        for rp, _, _, root_id, tree, lft, rght in rows:
            root[rp] = root_id
            if want_positions:
                position[rp] = (tree, lft, rght)


def _add_rows(target, rows):
    """rows (rp, value) -> target[rp] = {value, ...}."""
    for rp, value in rows:
        found = target.get(rp)
        if found is None:
            target[rp] = {value}
        else:
            found.add(value)


# --- summaries --------------------------------------------------------------------------


def _with_summaries(found, generated, roots, whole, query, names, whole_trees, all_classes,
                    with_traits):
    """Load what provider_summaries show for the providers of `found` (the candidates
    kept out of `generated`): every provider of their trees (whole_trees), else the
    providers in allocations of `generated` within the trees of `found` (§4.6, §4.7).
    `whole`: the Facts of a batch that read the whole database, whose rows are reused."""
    in_allocations = {rp for allocations, _ in found for (rp, _), _ in allocations}
    if whole_trees:
        selected, by_column = {roots[rp] for rp in in_allocations}, 3   # root id
        scope = Scope.trees(sorted(selected))
    else:
        if len(generated) > len(found):
            kept_roots = {roots[rp] for rp in in_allocations}
            in_allocations = {rp for allocations, _ in generated for (rp, _), _ in allocations
                              if roots[rp] in kept_roots}
        selected, by_column = in_allocations, 0   # provider id
        scope = Scope.providers(sorted(selected))
    requested = {names.classes[n] for n in query.requested_class_names()}
    if whole is None:
        providers = trees.providers(scope)
        inventories = capacity.inventories(scope, rc_ids=None if all_classes else requested)
        traits = summaries.trait_names(scope) if with_traits else None
    else:
        providers = [row for row in whole.every_provider if row[by_column] in selected]
        shown = None   # None: every provider is shown
        if len(providers) < len(whole.every_provider):
            shown = {row[0] for row in providers}
        if len(providers) * 10 >= len(whole.every_provider) * 6:
            # most providers are involved: reading every row beats a long id list
            scope = Scope.everything()
        # the requested classes' inventories were read with the facts
        inventories = _only(shown, whole.inventory_rows)
        if all_classes:
            others = capacity.inventories(scope, exclude_rc_ids=requested)
            inventories = inventories + _only(shown, others)
        traits = _only(shown, summaries.trait_names(scope)) if with_traits else None
    uuids = {row[0]: row[1] for row in providers}
    missing = {rp for _, mappings in found for _, rps in mappings for rp in rps} - uuids.keys()
    if missing:
        uuids.update(summaries.uuids(sorted(missing)))
    class_names = {rc: name for name, rc in names.classes.items()}
    unnamed = {row[1] for row in inventories} - class_names.keys()
    if unnamed:
        class_names.update(summaries.class_names(sorted(unnamed)))
    return Result(candidates=found, providers=providers, inventories=inventories,
                  traits=traits, uuids=uuids, class_names=class_names)


def _only(providers, rows):
    """The rows (rp, ...) of these providers (None: all rows)."""
    if providers is None:
        return rows
    return [row for row in rows if row[0] in providers]
