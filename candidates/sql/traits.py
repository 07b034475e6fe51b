"""Which providers have which of the traits a request mentions."""
from candidates.sql import fetch_links


def provider_traits(trait_ids, scope):
    """Rows (rp_id, trait_id) for the given traits in scope."""
    return fetch_links("""
        SELECT pt.provider_id, pt.trait_id FROM resource_provider_traits pt
        WHERE pt.trait_id IN ({marks}){where}
    """, trait_ids, scope, "pt.provider_id")

