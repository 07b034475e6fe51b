"""What provider_summaries show: providers, inventories with usage, traits.

Each function selects providers by ids or by root ids; neither means every
provider (a long id list costs PostgreSQL more than scanning tables this small).
"""
from candidates.sql import fetch, in_ids


def _filter(ids=None, root_ids=None, alias="rp"):
    if ids is None and root_ids is None:
        return "1 = 1", []
    if root_ids is not None:
        return in_ids(f"{alias}.root_id", root_ids)
    return in_ids(f"{alias}.id", ids)


def providers(ids=None, root_ids=None):
    """Rows (id, uuid, parent_id, root_id), ordered by id.

        SELECT rp.id, rp.uuid, rp.parent_id, rp.root_id FROM resource_providers rp
        WHERE <providers> ORDER BY rp.id
    """
    where, params = _filter(ids, root_ids)
    return fetch(f"""
        SELECT rp.id, rp.uuid, rp.parent_id, rp.root_id FROM resource_providers rp
        WHERE {where} ORDER BY rp.id
    """, params)


def inventories(ids=None, root_ids=None, rc_ids=None, exclude_rc_ids=()):
    """Rows (rp_id, class name, total, reserved, allocation_ratio, used) of the
    providers' inventories [of the given classes] [but not of the excluded ones].

        SELECT i.provider_id, rc.name, i.total, i.reserved, i.allocation_ratio,
               COALESCE(u.used, 0)
        FROM inventories i
        JOIN resource_classes rc ON rc.id = i.resource_class_id
        [JOIN resource_providers rp ON rp.id = i.provider_id]
        LEFT JOIN (SELECT a.provider_id, a.resource_class_id, SUM(a.used) AS used
                   FROM allocations a [JOIN resource_providers arp ...]
                   WHERE [<arp in the same providers>] [AND <same classes>]
                   GROUP BY a.provider_id, a.resource_class_id) u
               ON u.provider_id = i.provider_id AND u.resource_class_id = i.resource_class_id
        WHERE <rp in providers> [AND i.resource_class_id [NOT] IN (...)]
    """
    if rc_ids is not None and not rc_ids:
        return []
    everything = ids is None and root_ids is None
    where, params = _filter(ids, root_ids)
    usage_where, usage_params = _filter(ids, root_ids, alias="arp")
    join = "" if everything else "JOIN resource_providers rp ON rp.id = i.provider_id"
    usage_join = "" if everything else "JOIN resource_providers arp ON arp.id = a.provider_id"
    classes, class_params = _classes("i", rc_ids, exclude_rc_ids)
    usage_classes, usage_class_params = _classes("a", rc_ids, exclude_rc_ids)
    return fetch(f"""
        SELECT i.provider_id, rc.name, i.total, i.reserved, i.allocation_ratio,
               COALESCE(u.used, 0)
        FROM inventories i
        JOIN resource_classes rc ON rc.id = i.resource_class_id
        {join}
        LEFT JOIN (SELECT a.provider_id, a.resource_class_id, SUM(a.used) AS used
                   FROM allocations a {usage_join}
                   WHERE {usage_where}{usage_classes}
                   GROUP BY a.provider_id, a.resource_class_id) u
               ON u.provider_id = i.provider_id AND u.resource_class_id = i.resource_class_id
        WHERE {where}{classes}
    """, usage_params + usage_class_params + params + class_params)


def _classes(alias, rc_ids, exclude_rc_ids):
    """(" AND ...", params): alias.resource_class_id in rc_ids (None: any class) and not
    in exclude_rc_ids."""
    sql, params = "", []
    if rc_ids is not None:
        sql = f" AND {alias}.resource_class_id IN ({', '.join(['%s'] * len(rc_ids))})"
        params = list(rc_ids)
    if exclude_rc_ids:
        marks = ", ".join(["%s"] * len(exclude_rc_ids))
        sql += f" AND {alias}.resource_class_id NOT IN ({marks})"
        params += list(exclude_rc_ids)
    return sql, params


def trait_names(ids=None, root_ids=None):
    """Rows (rp_id, trait name) of those providers.

        SELECT pt.provider_id, t.name FROM resource_provider_traits pt
        JOIN traits t ... [JOIN resource_providers rp ...] WHERE <providers>
    """
    where, params = _filter(ids, root_ids)
    join = ("" if ids is None and root_ids is None
            else "JOIN resource_providers rp ON rp.id = pt.provider_id")
    return fetch(f"""
        SELECT pt.provider_id, t.name
        FROM resource_provider_traits pt
        JOIN traits t ON t.id = pt.trait_id
        {join}
        WHERE {where}
    """, params)


def uuids(ids):
    """{id: uuid} for these provider ids."""
    if not ids:
        return {}
    where, params = in_ids("rp.id", ids)
    return dict(fetch(f"SELECT rp.id, rp.uuid FROM resource_providers rp WHERE {where}", params))
