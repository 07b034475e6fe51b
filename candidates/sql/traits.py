"""Which providers have which of the traits a request mentions."""
from candidates.sql import fetch


def provider_traits(trait_ids, scope):
    """Rows (rp_id, trait_id, root_id, tree_id, lft, rght) for the given traits in scope.

        SELECT pt.provider_id, pt.trait_id, rp.root_id, ...
        FROM resource_provider_traits pt
        JOIN resource_providers rp ON rp.id = pt.provider_id
        WHERE pt.trait_id IN (...) [AND <scope>]
    """
    trait_ids = sorted(set(trait_ids))
    if not trait_ids or scope.empty:
        return []
    marks = ", ".join(["%s"] * len(trait_ids))
    where, params = scope.where("rp")
    return fetch(f"""
        SELECT pt.provider_id, pt.trait_id, rp.root_id, rp.tree_id, rp.lft, rp.rght
        FROM resource_provider_traits pt
        JOIN resource_providers rp ON rp.id = pt.provider_id
        WHERE pt.trait_id IN ({marks}){where}
    """, trait_ids + params)


def providers_with_trait(trait_id):
    """Rows (rp_id, root_id, tree_id, lft, rght) of every provider having one trait.

        SELECT rp.id, rp.root_id, ... FROM resource_provider_traits pt
        JOIN resource_providers rp ON rp.id = pt.provider_id WHERE pt.trait_id = %s
    """
    if trait_id is None:
        return []
    return fetch("""
        SELECT rp.id, rp.root_id, rp.tree_id, rp.lft, rp.rght
        FROM resource_provider_traits pt
        JOIN resource_providers rp ON rp.id = pt.provider_id
        WHERE pt.trait_id = %s ORDER BY rp.id
    """, [trait_id])
