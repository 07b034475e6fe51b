"""Names -> ids of everything one request mentions, in one round trip."""
from candidates.sql import fetch
from candidates.sql.topology import answered_from_snapshot

# kind -> (table, name column, value column)
_LOOKUPS = {
    "classes": ("resource_classes", "name", "id"),
    "traits": ("traits", "name", "id"),
    "aggregates": ("placement_aggregates", "uuid", "id"),
    "providers": ("resource_providers", "uuid", "root_id"),
}


@answered_from_snapshot
def ids_by_name(sharing_trait=None, every_class=False, root_bounds=False, **names):
    """{kind: {name: value}} for the kinds of _LOOKUPS (keyword arguments: kind=names);
    names that do not exist are absent. With sharing_trait (a trait name), also
    "sharing": the ids of the providers having that trait, ascending. every_class:
    "classes" maps every resource class, asked for or not (its branch has no WHERE).
    root_bounds: also "root_bounds", (lowest, highest) root provider id, (None, None)
    without providers: every provider's root_id is the id of a root, so MIN and MAX
    of root_id are two probes of its index (where MAX(id) ... WHERE parent_id IS NULL
    walks back over every child created after the last root); and "root_count", how
    many roots lie between them (an index-only count): trees written concurrently
    interleave their ids, so a span of root ids holds fewer trees than ids.

        SELECT 0, name, id FROM resource_classes WHERE name IN (...)
        UNION ALL SELECT 1, name, id FROM traits WHERE name IN (...)
        UNION ALL SELECT 2, uuid, id FROM placement_aggregates WHERE uuid IN (...)
        UNION ALL SELECT 3, uuid, root_id FROM resource_providers WHERE uuid IN (...)
        UNION ALL SELECT 4, t.name, pt.provider_id FROM resource_provider_traits pt
                  JOIN traits t ON t.id = pt.trait_id WHERE t.name = %s
        UNION ALL SELECT 5, NULL, MIN(root_id) FROM resource_providers
        UNION ALL SELECT 6, NULL, MAX(root_id) FROM resource_providers
        UNION ALL SELECT 7, NULL, COUNT(*) FROM resource_providers WHERE parent_id IS NULL

    (a branch only for the kinds given some names, for sharing_trait and for
    root_bounds).
    """
    kinds = list(names)
    found = {kind: {} for kind in kinds}
    branches, params = [], []
    for index, kind in enumerate(kinds):
        wanted = sorted(names[kind])
        table, column, value = _LOOKUPS[kind]
        if kind == "classes" and every_class:
            branches.append(f"SELECT {index}, {column}, {value} FROM {table}")
            continue
        if not wanted:
            continue
        marks = ", ".join(["%s"] * len(wanted))
        branches.append(f"SELECT {index}, {column}, {value} FROM {table}"
                        f" WHERE {column} IN ({marks})")
        params += wanted
    sharing_index = len(kinds)
    sharing = []
    if sharing_trait is not None:
        # every request needs the sharing providers: one round trip for both
        branches.append(f"SELECT {sharing_index}, t.name, pt.provider_id"
                        " FROM resource_provider_traits pt"
                        " JOIN traits t ON t.id = pt.trait_id WHERE t.name = %s")
        params.append(sharing_trait)
        found["sharing"] = sharing
    low_index, high_index, count_index = sharing_index + 1, sharing_index + 2, sharing_index + 3
    bounds = {}
    if root_bounds:
        branches.append(f"SELECT {low_index}, NULL, MIN(root_id) FROM resource_providers"
                        f" UNION ALL SELECT {high_index}, NULL, MAX(root_id)"
                        " FROM resource_providers"
                        f" UNION ALL SELECT {count_index}, NULL, COUNT(*)"
                        " FROM resource_providers WHERE parent_id IS NULL")
    if branches:
        for index, name, value in fetch(" UNION ALL ".join(branches), params):
            if index == sharing_index:
                sharing.append(value)
            elif index >= low_index:
                bounds[index] = value
            else:
                found[kinds[index]][name] = value
    sharing.sort()
    if root_bounds:
        found["root_bounds"] = (bounds[low_index], bounds[high_index])
        found["root_count"] = bounds[count_index]
    return found
