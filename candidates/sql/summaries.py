"""What provider_summaries show: providers, inventories with usage, traits."""
from candidates.sql import fetch, in_ids


def _filter(ids=None, root_ids=None, alias="rp"):
    """ids / root_ids select providers; both None means every provider."""
    if ids is None and root_ids is None:
        return "1 = 1", []
    if root_ids is not None:
        return in_ids(f"{alias}.root_id", root_ids)
    return in_ids(f"{alias}.id", ids)


def providers_with_inventories(ids=None, root_ids=None, rc_ids=None):
    """Rows (id, uuid, parent_id, root_id, class name, total, reserved, allocation_ratio,
    used) of the providers with these ids or roots (neither: all providers; a long id
    list costs PostgreSQL more than scanning a table that small): one row per inventory [of the given
    classes], or a single row with NULL class for a provider without one.

        SELECT rp.id, rp.uuid, rp.parent_id, rp.root_id, rc.name, i.total, i.reserved,
               i.allocation_ratio, COALESCE(u.used, 0)
        FROM resource_providers rp
        LEFT JOIN inventories i ON i.provider_id = rp.id [AND i.resource_class_id IN (...)]
        LEFT JOIN resource_classes rc ON rc.id = i.resource_class_id
        LEFT JOIN (SELECT a.provider_id, a.resource_class_id, SUM(a.used) AS used
                   FROM allocations a JOIN resource_providers arp ON arp.id = a.provider_id
                   WHERE <arp in the same providers>
                   GROUP BY a.provider_id, a.resource_class_id) u
               ON u.provider_id = i.provider_id AND u.resource_class_id = i.resource_class_id
        WHERE <rp in providers>
    """
    where, params = _filter(ids, root_ids)
    usage_where, usage_params = _filter(ids, root_ids, alias="arp")
    classes, class_params = "", []
    if rc_ids is not None:
        if not rc_ids:
            classes = " AND 1 = 0"
        else:
            classes = f" AND i.resource_class_id IN ({', '.join(['%s'] * len(rc_ids))})"
            class_params = list(rc_ids)
    return fetch(f"""
        SELECT rp.id, rp.uuid, rp.parent_id, rp.root_id, rc.name, i.total, i.reserved,
               i.allocation_ratio, COALESCE(u.used, 0)
        FROM resource_providers rp
        LEFT JOIN inventories i ON i.provider_id = rp.id{classes}
        LEFT JOIN resource_classes rc ON rc.id = i.resource_class_id
        LEFT JOIN (SELECT a.provider_id, a.resource_class_id, SUM(a.used) AS used
                   FROM allocations a
                   JOIN resource_providers arp ON arp.id = a.provider_id
                   WHERE {usage_where}
                   GROUP BY a.provider_id, a.resource_class_id) u
               ON u.provider_id = i.provider_id AND u.resource_class_id = i.resource_class_id
        WHERE {where}
        ORDER BY rp.id
    """, class_params + usage_params + params)


def trait_names(ids=None, root_ids=None):
    """Rows (rp_id, trait name, root_id) of those providers.

        SELECT pt.provider_id, t.name, rp.root_id FROM resource_provider_traits pt
        JOIN traits t ... JOIN resource_providers rp ... WHERE <providers>
    """
    where, params = _filter(ids, root_ids)
    return fetch(f"""
        SELECT pt.provider_id, t.name, rp.root_id
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
