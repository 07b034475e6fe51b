"""Names -> ids of everything one request mentions, in one round trip."""
from candidates.sql import fetch

# kind -> (table, name column, value column)
_LOOKUPS = {
    "classes": ("resource_classes", "name", "id"),
    "traits": ("traits", "name", "id"),
    "aggregates": ("placement_aggregates", "uuid", "id"),
    "providers": ("resource_providers", "uuid", "root_id"),
}


def ids_by_name(**names):
    """{kind: {name: value}} for the kinds of _LOOKUPS (keyword arguments: kind=names);
    names that do not exist are absent.

        SELECT 0, name, id FROM resource_classes WHERE name IN (...)
        UNION ALL SELECT 1, name, id FROM traits WHERE name IN (...)
        UNION ALL SELECT 2, uuid, id FROM placement_aggregates WHERE uuid IN (...)
        UNION ALL SELECT 3, uuid, root_id FROM resource_providers WHERE uuid IN (...)

    (a branch only for the kinds given some names).
    """
    kinds = list(names)
    found = {kind: {} for kind in kinds}
    branches, params = [], []
    for index, kind in enumerate(kinds):
        wanted = sorted(names[kind])
        if not wanted:
            continue
        table, column, value = _LOOKUPS[kind]
        marks = ", ".join(["%s"] * len(wanted))
        branches.append(f"SELECT {index}, {column}, {value} FROM {table}"
                        f" WHERE {column} IN ({marks})")
        params += wanted
    if branches:
        for index, name, value in fetch(" UNION ALL ".join(branches), params):
            found[kinds[index]][name] = value
    return found
