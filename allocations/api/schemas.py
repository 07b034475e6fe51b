"""Allocations' part of the OpenAPI document:
OPERATIONS, RESPONSE_SCHEMAS and CREATES (foundation/api/openapi_parts.py).

The request schemas are allocations/payloads.py's (the views and the `reshape` command
validate with them); the project (placement_site/openapi.py) publishes them.
"""
from allocations.payloads import post_schema, put_schema, reshaper_schema, usages_schema
from foundation.api.microversion import MAX as LATEST
from foundation.api.openapi_parts import COUNT, created, mapping, obj, operation


# --- the OpenAPI document ------------------------------------------------------------------

RESPONSE_SCHEMAS = {
    # {} without allocations; the consumer's keys only when it has some.
    "ConsumerAllocations": obj({
        "allocations": mapping(obj({"generation": {"type": "integer"},
                                    "resources": mapping(COUNT)})),
        "consumer_generation": {"type": "integer"},
        "consumer_type": {"type": "string"},
        "project_id": {"type": "string"},
        "user_id": {"type": "string"},
    }, required=["allocations"]),
    "ProviderAllocations": obj({
        "allocations": mapping(obj({"resources": mapping(COUNT),
                                    "consumer_generation": {"type": "integer"}})),
        "resource_provider_generation": {"type": "integer"}}),
    "ProviderUsages": obj({"resource_provider_generation": {"type": "integer"},
                           "usages": mapping(COUNT)}),
    # Grouped by consumer type (1.38+), each group with consumer_count.
    "Usages": obj({"usages": mapping(mapping(COUNT))}),
}

OPERATIONS = {
    ("/resource_providers/{uuid}/allocations", "get"): operation(
        "List the allocations against a provider", {200: "ProviderAllocations"}),
    ("/resource_providers/{uuid}/usages", "get"): operation(
        "Show a provider's usages", {200: "ProviderUsages"}),
    ("/allocations", "post"): operation(
        "Replace the allocations of several consumers", {204: None},
        body=post_schema(LATEST)),
    ("/allocations/{consumer_uuid}", "get"): operation(
        "Show a consumer's allocations", {200: "ConsumerAllocations"}),
    ("/allocations/{consumer_uuid}", "put"): operation(
        "Replace a consumer's allocations", {204: None}, body=put_schema(LATEST)),
    ("/allocations/{consumer_uuid}", "delete"): operation(
        "Delete a consumer's allocations", {204: None}),
    ("/usages", "get"): operation("Usages of a project (and user)", {200: "Usages"},
                                  query=usages_schema(LATEST)),
    ("/reshaper", "post"): operation(
        "Move inventories and allocations atomically", {204: None},
        body=reshaper_schema(LATEST)),
}

CREATES = (
    created("/allocations/{consumer_uuid}", "put", "204", "/allocations/{consumer_uuid}",
            {"consumer_uuid": "$request.path.consumer_uuid"}),
)
