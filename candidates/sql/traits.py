"""Which providers have which of the traits a request mentions."""
from candidates.sql import fetch, fetch_links


def provider_traits(trait_ids, scope):
    """Rows (rp_id, trait_id) for the given traits in scope."""
    return fetch_links("""
        SELECT pt.provider_id, pt.trait_id FROM resource_provider_traits pt
        WHERE pt.trait_id IN ({marks}){where}
    """, trait_ids, scope, "pt.provider_id")


def providers_with_trait(trait_id):
    """Ids of every provider having one trait, ascending.

        SELECT provider_id FROM resource_provider_traits WHERE trait_id = %s
    """
    if trait_id is None:
        return []
    return [row[0] for row in fetch("""
        SELECT provider_id FROM resource_provider_traits
        WHERE trait_id = %s ORDER BY provider_id
    """, [trait_id])]
