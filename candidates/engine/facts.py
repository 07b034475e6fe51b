"""Loading one batch's facts: what the SQL layer knows about the providers of a scope,
for the groups of one request, in a constant number of queries (candidate_set.Facts)."""
from candidates import candidate_set
from candidates.sql import Scope, aggregates as agg_sql, capacity, links, trees

# Below this many providers of interest, the whole-database batch looks them up by id;
# above it, reading the provider table once is cheaper than a long id list.
LOOKUP_BY_ID_UP_TO = 200


def load_facts(scope, groups, evaluation, keep_rows=False, by_id=True, every_class=False,
               trait_names=False):
    """Facts about the providers of `scope` plus every sharing provider, for `groups`
    (candidate_set.Group) of the request under `evaluation`; a constant number of
    queries. keep_rows: also keep every inventory row read (facts.loaded_rows), for the
    explainer's numbers. by_id: for a range of trees, read its providers first and ask
    for the rest by their ids (a small share of a large cloud). every_class: read the
    inventories of `scope` of every class, not only the requested ones: provider
    summaries show them all (1.27+), and one read serves both. trait_names: a batch named
    by id (a limited request's, sized to what it returns) reads every trait of its
    providers with its name (facts.trait_names), the filters taking theirs from them:
    summaries show them (1.17+). A batch of the whole database reads only the request's
    traits: its summaries may show a few providers of many."""
    facts = candidate_set.Facts(holds_root=scope.holds_root)
    if keep_rows:
        facts.loaded_rows = {}
    amounts = {key for group in groups for key in group.amounts}
    trait_ids = set(evaluation.root_required | evaluation.root_forbidden)
    sharing_ids = evaluation.sharing
    aggregate_ids = set(evaluation.root_aggregate_ids())
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
    provider_rows = {}   # scope -> its trees.providers rows, when read first
    positions = bool(evaluation.query.same_subtree)
    for index, where in enumerate(scopes):
        if by_id and where.kind in ("range", "roots"):
            # Read the batch's providers first and name them by id below: PostgreSQL
            # then reaches their rows through the provider indexes, where a range of
            # trees makes it scan every row of a link table (cost growing with the cloud).
            rows = provider_rows[index] = trees.providers(where, positions)
            where = Scope.providers([row.id for row in rows])
        every = every_class and index == 0
        read = capacity.inventory_groups(where, rc_ids=None if every else class_ids)
        if index == 0:
            facts.inventory_groups = read
            facts.every_class = every
        if keep_rows:
            facts.loaded_rows.update(capacity.rows_by_key(read))
        for key, rps in capacity.fitting_groups(amounts, read).items():
            fits.setdefault(key, []).extend(rps)
        if want_inventory:
            for key, rps in read:
                rc = key.rc_id
                shown = (key.used, key.total, key.reserved, key.allocation_ratio, key.max_unit)
                for rp in rps:
                    inventory[(rp, rc)] = shown
        if trait_names and index in provider_rows:
            trait_rows, aggregate_rows, facts.trait_names = (
                links.provider_traits_and_aggregates(trait_ids, aggregate_ids, where,
                                                     trait_names=True))
        else:
            trait_rows, aggregate_rows = links.provider_traits_and_aggregates(
                trait_ids, aggregate_ids, where)
        add_rows(facts.traits, trait_rows)
        add_rows(facts.aggregates, aggregate_rows)
    if sharing_ids:
        # a sharing provider inside the scope was seen twice
        facts.fits = {key: sorted(set(rps)) for key, rps in fits.items()}
        for rp, anchor in agg_sql.sharing_anchor_roots(sharing_ids, scope):
            facts.sharing_anchors.setdefault(rp, set()).add(anchor)
    else:
        facts.fits = {key: sorted(rps) for key, rps in fits.items()}
    _add_positions(facts, scopes, provider_rows, positions)
    return facts


def _add_positions(facts, scopes, provider_rows, positions):
    """Root (and, with positions, MPTT position: same_subtree needs it) of every
    provider the facts mention. provider_rows: index in scopes -> the providers rows
    already read."""
    root, position = facts.root, facts.position
    for index, scope in enumerate(scopes):
        if index in provider_rows:
            rows = facts.tree_rows = provider_rows[index]
        elif scope.kind == "all":
            mentioned = set(facts.traits)
            mentioned.update(facts.aggregates)
            for rps in facts.fits.values():
                mentioned.update(rps)
            if len(mentioned) <= LOOKUP_BY_ID_UP_TO:
                scope = Scope.providers(sorted(mentioned))
                rows = trees.providers(scope, positions)
            else:
                rows = facts.every_provider = facts.tree_rows = trees.providers(
                    scope, positions)
        else:
            rows = trees.providers(scope, positions)
            if index == 0:   # every provider of the batch's trees
                facts.tree_rows = rows
        roots, positions_ = trees.tree_index(scope, rows, positions)   # rows of scope
        root.update(roots)
        if positions:
            position.update(positions_)


def add_rows(target, rows):
    """rows (rp, value) -> target[rp] = {value, ...}."""
    for rp, value in rows:
        found = target.get(rp)
        if found is None:
            target[rp] = {value}
        else:
            found.add(value)
