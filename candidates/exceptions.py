"""Errors raised by the allocation-candidates engine and its query parser.

Domain errors (foundation/domain_errors.py) with Placement's wording
(allocation-candidates.md §3) and code; none of them knows HTTP
(foundation/api/exceptions.py maps the kinds to statuses). The value grammars
of `resources`, `required` and `member_of` are providers' (providers/query_params.py,
shared with GET /resource_providers): a bad value there raises providers'
InvalidQuery, which reaches the caller unchanged.
"""
from foundation.domain_errors import InvalidInput


class InvalidCandidatesQuery(InvalidInput):
    """GET /allocation_candidates' query breaks one of candidates' own rules (the query
    schema, request groups, group_policy, root_required, same_subtree), or names a
    resource class or trait that does not exist (§3.6)."""
