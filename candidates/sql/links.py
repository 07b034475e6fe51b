"""The traits and aggregates a request filters on, of one scope, in one round trip."""
from candidates.sql import fetch, links_query
from candidates.sql.aggregates import PROVIDER_AGGREGATES
from candidates.sql.traits import PROVIDER_TRAITS


def provider_traits_and_aggregates(trait_ids, aggregate_ids, scope):
    """(traits.provider_traits(trait_ids, scope),
    aggregates.provider_aggregates(aggregate_ids, scope)) from one query:

        SELECT 0, t.* FROM (<provider_traits query>) t
        UNION ALL SELECT 1, a.* FROM (<provider_aggregates query>) a
    """
    branches, params = [], []
    for tag, ids, (sql, column) in ((0, trait_ids, PROVIDER_TRAITS),
                                    (1, aggregate_ids, PROVIDER_AGGREGATES)):
        sql, branch_params = links_query(sql, ids, scope, column)
        if sql:
            branches.append(f"SELECT {tag}, b{tag}.* FROM ({sql}) b{tag}")
            params += branch_params
    found = ([], [])
    if branches:
        for tag, rp, link in fetch(" UNION ALL ".join(branches), params):
            found[tag].append((rp, link))
    return found
