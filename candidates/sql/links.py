"""The traits and aggregates a request filters on, of one scope, in one round trip."""
from candidates.sql import fetch, links_query
from candidates.sql.aggregates import PROVIDER_AGGREGATES
from candidates.sql.summaries import NAMED_TRAITS
from candidates.sql.traits import PROVIDER_TRAITS
from candidates.sql.topology import answered_from_snapshot


@answered_from_snapshot
def provider_traits_and_aggregates(trait_ids, aggregate_ids, scope, trait_names=False):
    """(traits.provider_traits(trait_ids, scope),
    aggregates.provider_aggregates(aggregate_ids, scope)) from one query:

        SELECT 0, t.*, NULL FROM (<provider_traits query>) t
        UNION ALL SELECT 1, a.*, NULL FROM (<provider_aggregates query>) a

    trait_names: the first branch reads every trait of the scope's providers with its
    name instead (summaries.NAMED_TRAITS), the rows are ordered (ORDER BY 1, 2, 3), and a
    third item comes back: rows (rp_id, trait name) in provider and trait id order, as
    summaries.trait_names(scope) reads them.
    """
    branches, params = [], []
    if trait_names and not scope.empty:
        where, branch_params = scope.provider_filter("pt.provider_id")
        branches.append(f"SELECT 0, b0.* FROM ({NAMED_TRAITS.format(where=where)}) b0")
        params += branch_params
    for tag, ids, (sql, column) in ((0, () if trait_names else trait_ids, PROVIDER_TRAITS),
                                    (1, aggregate_ids, PROVIDER_AGGREGATES)):
        sql, branch_params = links_query(sql, ids, scope, column)
        if sql:
            branches.append(f"SELECT {tag}, b{tag}.*, NULL FROM ({sql}) b{tag}")
            params += branch_params
    found = ([], [], [])
    if branches:
        wanted = set(trait_ids)
        order = " ORDER BY 1, 2, 3" if trait_names else ""   # only names need an order
        for tag, rp, link, name in fetch(" UNION ALL ".join(branches) + order, params):
            if name is not None:
                found[2].append((rp, name))
                if link not in wanted:
                    continue
            found[tag].append((rp, link))
    return found if trait_names else found[:2]
