"""What provider_summaries show: providers, inventories with usage, traits."""
from candidates.sql import fetch, in_ids


def _filter(ids=None, root_ids=None, alias="rp"):
    if root_ids is not None:
        return in_ids(f"{alias}.root_id", root_ids)
    return in_ids(f"{alias}.id", ids)


def providers(ids=None, root_ids=None):
    """Rows (id, uuid, parent_id, root_id) of the providers with these ids or roots.

        SELECT id, uuid, parent_id, root_id FROM resource_providers rp
        WHERE rp.id IN (...) | rp.root_id IN (...)
    """
    where, params = _filter(ids, root_ids)
    return fetch(f"SELECT rp.id, rp.uuid, rp.parent_id, rp.root_id "
                 f"FROM resource_providers rp WHERE {where}", params)


def inventories(ids=None, root_ids=None, rc_ids=None):
    """Rows (rp_id, class name, total, reserved, allocation_ratio, used) of those
    providers [and classes].

        SELECT i.provider_id, rc.name, i.total, i.reserved, i.allocation_ratio,
               COALESCE((SELECT SUM(a.used) FROM allocations a WHERE ...), 0)
        FROM inventories i JOIN resource_classes rc ... JOIN resource_providers rp ...
        WHERE <providers> [AND i.resource_class_id IN (...)]
    """
    where, params = _filter(ids, root_ids)
    if rc_ids is not None:
        if not rc_ids:
            return []
        marks = ", ".join(["%s"] * len(rc_ids))
        where += f" AND i.resource_class_id IN ({marks})"
        params += list(rc_ids)
    return fetch(f"""
        SELECT i.provider_id, rc.name, i.total, i.reserved, i.allocation_ratio,
               COALESCE((SELECT SUM(a.used) FROM allocations a
                         WHERE a.provider_id = i.provider_id
                           AND a.resource_class_id = i.resource_class_id), 0)
        FROM inventories i
        JOIN resource_classes rc ON rc.id = i.resource_class_id
        JOIN resource_providers rp ON rp.id = i.provider_id
        WHERE {where}
        ORDER BY i.provider_id, i.resource_class_id
    """, params)


def trait_names(ids=None, root_ids=None):
    """Rows (rp_id, trait name) of those providers.

        SELECT pt.provider_id, t.name FROM resource_provider_traits pt
        JOIN traits t ... JOIN resource_providers rp ... WHERE <providers>
    """
    where, params = _filter(ids, root_ids)
    return fetch(f"""
        SELECT pt.provider_id, t.name
        FROM resource_provider_traits pt
        JOIN traits t ON t.id = pt.trait_id
        JOIN resource_providers rp ON rp.id = pt.provider_id
        WHERE {where}
    """, params)


def uuids(ids):
    """{id: uuid} for these provider ids."""
    if not ids:
        return {}
    where, params = in_ids("rp.id", ids)
    return dict(fetch(f"SELECT rp.id, rp.uuid FROM resource_providers rp WHERE {where}", params))
