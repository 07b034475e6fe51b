"""Facts about the provider forest as a whole."""
from candidates.sql import fetch


def any_provider_has_parent():
    """True if some provider has a parent (pre-1.29 requests then drop same-tree pairs).

        SELECT 1 FROM resource_providers WHERE parent_id IS NOT NULL LIMIT 1
    """
    return bool(fetch("SELECT 1 FROM resource_providers WHERE parent_id IS NOT NULL LIMIT 1"))


def root_id_bounds():
    """(lowest, highest) root provider id, or (None, None) when there is no provider.

        SELECT MIN(id), MAX(id) FROM resource_providers WHERE parent_id IS NULL
    """
    return fetch("SELECT MIN(id), MAX(id) FROM resource_providers WHERE parent_id IS NULL")[0]


def root_ids():
    """Ids of every root provider (used only on the rare error-reporting path).

        SELECT id FROM resource_providers WHERE parent_id IS NULL
    """
    return [row[0] for row in fetch("SELECT id FROM resource_providers WHERE parent_id IS NULL")]


def providers(scope):
    """Rows (id, uuid, parent_id, root_id, tree_id, lft, rght) of the providers in
    scope, ordered by id.

        SELECT id, uuid, parent_id, root_id, tree_id, lft, rght
        FROM resource_providers rp [WHERE <scope>] ORDER BY rp.id
    """
    if scope.empty:
        return []
    where, params = scope.where("rp")
    return fetch(f"""
        SELECT rp.id, rp.uuid, rp.parent_id, rp.root_id, rp.tree_id, rp.lft, rp.rght
        FROM resource_providers rp WHERE 1 = 1{where} ORDER BY rp.id
    """, params)
