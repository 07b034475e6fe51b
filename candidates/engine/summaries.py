"""What provider_summaries show for the candidates kept (§4.6, §4.7), reusing what the
batches read where it covers them."""
from candidates.sql import Scope, capacity, trees
from candidates.sql import summaries as summary_sql


def candidate_tree(candidate, roots, sharing):
    """The tree (root id) a candidate is built around: that of its providers which are
    not sharing providers (they all have one root, §4.1 "Anchor"), else, for a candidate
    made of sharing providers only, that of its first provider."""
    allocations, mappings = candidate
    first = None
    for rp, _ in allocations:
        if rp not in sharing:
            return roots[rp]
        first = rp if first is None else first
    for _, rps in mappings:
        for rp in rps:
            if rp not in sharing:
                return roots[rp]
            first = rp if first is None else first
    return roots[first]


def with_summaries(found, generated, roots, batches, query, names, whole_trees,
                   all_classes, with_traits):
    """The Result fields of the summaries (providers, inventories, traits, uuids,
    class_names, see engine.Result) for the providers of `found` (the candidates kept out
    of `generated`): every provider of their trees (whole_trees), else the providers in
    allocations of `generated` within the trees of `found` (§4.6, §4.7).
    `batches`: the Facts of the batches read; their provider and inventory rows are
    reused when they cover every provider shown."""
    in_allocations = {rp for allocations, _ in found for rp, _ in allocations}
    if whole_trees:
        selected = {roots[rp] for rp in in_allocations}   # root ids
        scope = Scope.trees(sorted(selected))
    else:
        if len(generated) > len(found):
            kept_roots = {roots[rp] for rp in in_allocations}
            in_allocations = {rp for allocations, _ in generated for rp, _ in allocations
                              if roots[rp] in kept_roots}
        selected = in_allocations   # provider ids
        scope = Scope.providers(sorted(selected))
    requested = {names.classes[n] for n in query.requested_class_names()}
    read = [facts for facts in batches if facts.tree_rows is not None]
    known = [row for facts in read for row in facts.tree_rows]
    providers, covered = _selected_rows(known, selected, whole_trees)
    if covered < len(selected):
        # some provider shown lies outside the trees the batches read
        providers = trees.providers(scope, positions=False)
        # by id: see facts.load_facts
        scope = Scope.providers([row.id for row in providers])
        inventories = capacity.shown_groups(scope, rc_ids=None if all_classes else requested)
        traits = summary_sql.trait_names(scope) if with_traits else None
    else:
        if len(read) > 1:
            providers.sort()   # in id order, as trees.providers reads them
        shown = None   # None: every provider read is shown
        if len(providers) < len(known):
            shown = {row.id for row in providers}
        if not any(facts.every_provider is not None for facts in read):
            # by id: see facts.load_facts
            scope = Scope.providers([row.id for row in providers])
        elif len(providers) * 10 >= len(known) * 6:
            # most providers are involved: reading every row beats a long id list
            scope = Scope.everything()
        # the inventories were read with the facts: every class's when all_classes
        inventories = _only_groups(shown, [group for facts in read
                                           for group in facts.inventory_groups])
        if all_classes and not all(facts.every_class for facts in read):
            others = capacity.shown_groups(scope, exclude_rc_ids=requested)
            inventories = inventories + _only_groups(shown, others)
        traits = None
        if with_traits:
            if all(facts.trait_names is not None for facts in read):
                traits = [row for facts in read for row in facts.trait_names]
            else:
                traits = summary_sql.trait_names(scope)
            traits = _only(shown, traits)
    uuids = {row.id: row.uuid for row in providers}
    if any(group.resourceless for group in query.groups):
        # a resourceless group maps a provider that may hold no allocation of the
        # candidate (every other group's providers are in its allocations, named above)
        missing = ({rp for _, mappings in found for _, rps in mappings for rp in rps}
                   - uuids.keys())
        if missing:
            uuids.update(summary_sql.uuids(sorted(missing)))
    class_names = {rc: name for name, rc in names.classes.items()}
    unnamed = {key.rc_id for key, _ in inventories} - class_names.keys()
    if unnamed:
        class_names.update(summary_sql.class_names(sorted(unnamed)))
    return {"providers": providers, "inventories": inventories, "traits": traits,
            "uuids": uuids, "class_names": class_names}


def _selected_rows(rows, selected, whole_trees):
    """The ProviderRows of `rows` in the trees `selected` (whole_trees), else of the
    providers `selected`, and how many of `selected` they cover."""
    if whole_trees:
        found = [row for row in rows if row.root_id in selected]
        return found, len({row.root_id for row in found})
    found = [row for row in rows if row.id in selected]
    return found, len({row.id for row in found})


def _only_groups(providers, groups):
    """The inventory groups narrowed to these providers (None: all), empty ones dropped."""
    if providers is None:
        return groups
    narrowed = [(key, [rp for rp in rps if rp in providers]) for key, rps in groups]
    return [(key, rps) for key, rps in narrowed if rps]


def _only(providers, rows):
    """The rows (rp, ...) of these providers (None: all rows)."""
    if providers is None:
        return rows
    return [row for row in rows if row[0] in providers]
