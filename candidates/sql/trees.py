"""Facts about the provider forest as a whole."""
from candidates.sql import fetch, in_ids
from candidates.sql.rows import ProviderRow
from candidates.sql.topology import answered_from_snapshot, tree_index_of
from providers.models import ResourceProvider


@answered_from_snapshot
def any_provider_has_parent():
    """True if some provider has a parent (pre-1.29 requests then drop same-tree pairs).

        SELECT 1 FROM resource_providers WHERE parent_id IS NOT NULL LIMIT 1
    """
    return bool(fetch("SELECT 1 FROM resource_providers WHERE parent_id IS NOT NULL LIMIT 1"))


@answered_from_snapshot
def root_ids():
    """Ids of every root provider (used only on the rare error-reporting path).

        SELECT id FROM resource_providers WHERE parent_id IS NULL
    """
    return [row[0] for row in fetch("SELECT id FROM resource_providers WHERE parent_id IS NULL")]


@answered_from_snapshot
def providers(scope, positions=True):
    """rows.ProviderRow (id, uuid, parent_id, root_id, tree_id, lft, rght) of the
    providers in scope, ordered by id.

        SELECT id, uuid, parent_id, root_id, tree_id, lft, rght
        FROM resource_providers rp [WHERE <scope>] ORDER BY rp.id

    positions=False: tree_id, lft and rght come back as None (only same_subtree needs
    them). Every value read costs: the database writes it as text and the driver parses
    it back, where a NULL costs next to nothing.
    """
    if scope.empty:
        return []
    where, params = scope.where("rp")
    position = "rp.tree_id, rp.lft, rp.rght" if positions else "NULL, NULL, NULL"
    return list(map(ProviderRow._make, fetch(f"""
        SELECT rp.id, rp.uuid, rp.parent_id, rp.root_id, {position}
        FROM resource_providers rp WHERE 1 = 1{where} ORDER BY rp.id
    """, params)))


@answered_from_snapshot
def tree_index(scope, rows, positions=True):
    """({rp: root id}, {rp: (tree_id, lft, rght)}) of `rows`, the providers(scope) rows:
    what the engine looks up provider by provider. No SQL; it is here because a snapshot
    keeps the index of its whole database rather than making it anew for each request.
    positions=False: the second dict is empty.
    """
    return tree_index_of(rows, positions)


def root_count():
    """Number of provider trees.

        SELECT COUNT(*) FROM resource_providers WHERE parent_id IS NULL
    """
    return fetch("SELECT COUNT(*) FROM resource_providers WHERE parent_id IS NULL")[0][0]


def roots_by_name(offset, count):
    """Ids of `count` root providers from `offset`, in (name, id) order (a page of trees).

        SELECT id FROM resource_providers WHERE parent_id IS NULL
        ORDER BY name, id LIMIT %s OFFSET %s
    """
    return [row[0] for row in fetch("""
        SELECT id FROM resource_providers WHERE parent_id IS NULL
        ORDER BY name, id LIMIT %s OFFSET %s
    """, [count, offset])]


def roots_named_like(text):
    """Ids of the roots of the trees with a provider whose name contains `text`
    (case-insensitive, on every database: the ORM's icontains), in (name, id) order, as
    pages of trees go; one query. The why-not explainer's and the explorer's name filter.

        SELECT id FROM resource_providers WHERE id IN (
            SELECT root_id FROM resource_providers WHERE name LIKE '%text%')
        ORDER BY name, id
    """
    roots = ResourceProvider.objects.filter(name__icontains=text).values("root_id")
    return list(ResourceProvider.objects.filter(id__in=roots).order_by("name", "id")
                .values_list("id", flat=True))


def names(ids):
    """{id: name} of these providers.

        SELECT id, name FROM resource_providers WHERE id IN (...)
    """
    if not ids:
        return {}
    where, params = in_ids("id", ids)
    return dict(fetch(f"SELECT id, name FROM resource_providers WHERE {where}", params))


def root_of(uuid_or_name):
    """Root id of the provider with this uuid or name, or None.

        SELECT root_id FROM resource_providers WHERE uuid = %s OR name = %s
    """
    rows = fetch("SELECT root_id FROM resource_providers WHERE uuid = %s OR name = %s"
                 " ORDER BY id LIMIT 1", [uuid_or_name, uuid_or_name])
    return rows[0][0] if rows else None


def named_providers(root_ids, ids=()):
    """Rows (id, uuid, name, parent uuid, root_id) of every provider of the trees
    `root_ids` and of the providers `ids`, in tree order (each tree depth-first).

        SELECT rp.id, rp.uuid, rp.name, parent.uuid, rp.root_id
        FROM resource_providers rp
        LEFT JOIN resource_providers parent ON parent.id = rp.parent_id
        WHERE rp.root_id IN (...) OR rp.id IN (...) ORDER BY rp.tree_id, rp.lft
    """
    if not root_ids and not ids:
        return []
    roots_sql, roots_params = in_ids("rp.root_id", root_ids)
    ids_sql, ids_params = in_ids("rp.id", ids)
    return fetch(f"""
        SELECT rp.id, rp.uuid, rp.name, parent.uuid, rp.root_id
        FROM resource_providers rp
        LEFT JOIN resource_providers parent ON parent.id = rp.parent_id
        WHERE {roots_sql} OR {ids_sql}
        ORDER BY rp.tree_id, rp.lft
    """, roots_params + ids_params)
