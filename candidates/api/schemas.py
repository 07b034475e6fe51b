"""Candidates' part of the OpenAPI document: OPERATIONS, RESPONSE_SCHEMAS and CREATES
(foundation/api/openapi_parts.py), read by the project (placement_site/openapi.py).

The query schema is the one the parser validates with (candidates/request.py).
"""
from candidates.options import extensions
from candidates.request import query_schema
from foundation.api.openapi_parts import COUNT, NAME, UUID, mapping, obj, operation

RESPONSE_SCHEMAS = {
    "AllocationCandidates": obj({
        "allocation_requests": {"type": "array", "items": obj({
            "allocations": mapping(obj({"resources": mapping(COUNT)})),
            "mappings": mapping({"type": "array", "items": UUID}),
        })},
        "provider_summaries": mapping(obj({
            "resources": mapping(obj({"capacity": COUNT, "used": COUNT})),
            "traits": {"type": "array", "items": NAME},
            "parent_provider_uuid": {"anyOf": [UUID, {"type": "null"}]},
            "root_provider_uuid": UUID,
        })),
    }),
}

OPERATIONS = {
    ("/allocation_candidates", "get"): operation(
        "Allocation candidates for a request", {200: "AllocationCandidates"},
        # the extensions that are on add their parameters at 1.40
        query=lambda latest: query_schema(latest, extensions())),
}

CREATES = ()
