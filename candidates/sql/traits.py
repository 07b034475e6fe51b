"""Which providers have which of the traits a request mentions."""
from candidates.sql import fetch_links
from candidates.sql.topology import answered_from_snapshot


PROVIDER_TRAITS = ("""
        SELECT pt.provider_id, pt.trait_id FROM resource_provider_traits pt
        WHERE pt.trait_id IN ({marks}){where}
    """, "pt.provider_id")


@answered_from_snapshot
def provider_traits(trait_ids, scope):
    """Rows (rp_id, trait_id) for the given traits in scope."""
    sql, column = PROVIDER_TRAITS
    return fetch_links(sql, trait_ids, scope, column)

