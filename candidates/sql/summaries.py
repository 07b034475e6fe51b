"""What provider_summaries show besides inventories (capacity.inventories) and the
providers themselves (trees.providers): trait names, uuids, class names."""
from candidates.sql import fetch, in_ids
from candidates.sql.topology import answered_from_snapshot


# Every trait of the providers in scope ({where}), with its name; the links query of a
# batch named by id reads these rows too (links.py).
NAMED_TRAITS = """
        SELECT pt.provider_id, pt.trait_id, t.name FROM resource_provider_traits pt
        JOIN traits t ON t.id = pt.trait_id WHERE 1 = 1{where}
    """


@answered_from_snapshot
def trait_names(scope):
    """Rows (rp_id, trait name) of the providers in scope.

        SELECT n.provider_id, n.name FROM (<NAMED_TRAITS>) n
        ORDER BY n.provider_id, n.trait_id

    Each provider's traits come in trait id (creation) order, as in Placement, on every
    database.
    """
    if scope.empty:
        return []
    where, params = scope.provider_filter("pt.provider_id")
    return fetch(f"SELECT n.provider_id, n.name FROM ({NAMED_TRAITS.format(where=where)}) n"
                 " ORDER BY n.provider_id, n.trait_id", params)


@answered_from_snapshot
def uuids(ids):
    """{id: uuid} for these provider ids."""
    if not ids:
        return {}
    where, params = in_ids("rp.id", ids)
    return dict(fetch(f"SELECT rp.id, rp.uuid FROM resource_providers rp WHERE {where}", params))


@answered_from_snapshot
def class_names(ids):
    """{id: name} for these resource class ids."""
    if not ids:
        return {}
    where, params = in_ids("rc.id", ids)
    return dict(fetch(f"SELECT rc.id, rc.name FROM resource_classes rc WHERE {where}", params))
