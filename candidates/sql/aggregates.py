"""Aggregate membership: for member_of filters and for sharing providers."""
from candidates.sql import fetch, fetch_links, in_ids
from candidates.sql.topology import answered_from_snapshot


PROVIDER_AGGREGATES = ("""
        SELECT pa.provider_id, pa.aggregate_id FROM resource_provider_aggregates pa
        WHERE pa.aggregate_id IN ({marks}){where}
    """, "pa.provider_id")


@answered_from_snapshot
def provider_aggregates(aggregate_ids, scope):
    """Rows (rp_id, aggregate_id) for the aggregates in scope."""
    sql, column = PROVIDER_AGGREGATES
    return fetch_links(sql, aggregate_ids, scope, column)


@answered_from_snapshot
def sharing_anchor_roots(sharing_ids, scope):
    """Rows (sharing rp_id, root_id): roots in scope whose tree shares an aggregate with it.

    Its own root appears when it is in one of its own aggregates (the engine always
    counts it as an anchor anyway).

        SELECT DISTINCT sa.provider_id, rp.root_id
        FROM resource_provider_aggregates sa
        JOIN resource_provider_aggregates pa ON pa.aggregate_id = sa.aggregate_id
        JOIN resource_providers rp ON rp.id = pa.provider_id
        WHERE sa.provider_id IN (...) [AND <scope on rp>]
    """
    if not sharing_ids or scope.empty:
        return []
    ids_sql, ids_params = in_ids("sa.provider_id", sharing_ids)
    where, params = scope.where("rp")
    return fetch(f"""
        SELECT DISTINCT sa.provider_id, rp.root_id
        FROM resource_provider_aggregates sa
        JOIN resource_provider_aggregates pa ON pa.aggregate_id = sa.aggregate_id
        JOIN resource_providers rp ON rp.id = pa.provider_id
        WHERE {ids_sql}{where}
    """, ids_params + params)
