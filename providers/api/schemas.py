"""The JSON schemas of providers' API requests, and providers' part of the OpenAPI
document: OPERATIONS, RESPONSE_SCHEMAS and CREATES (foundation/api/openapi_parts.py).

The views validate with the schemas below; the project (placement_site/openapi.py)
publishes the same objects, so the document cannot drift from validation.
"""
from functools import lru_cache

from foundation.api.microversion import (
    NESTED_PROVIDERS,
    PROVIDERS_MEMBER_OF,
    PROVIDERS_REQUIRED,
    PROVIDERS_RESOURCES,
)
from foundation.api.microversion import MAX as LATEST
from foundation.api.openapi_parts import (
    LINKS,
    NAME,
    UUID,
    created,
    mapping,
    obj,
    operation,
    ref,
)
from providers import rules

# --- resource classes and traits -----------------------------------------------------

CUSTOM_NAME_SCHEMA = rules.CUSTOM_NAME_SCHEMA
RESOURCE_CLASS_BODY_SCHEMA = {
    "type": "object",
    "properties": {"name": CUSTOM_NAME_SCHEMA},
    "required": ["name"],
    "additionalProperties": False,
}

TRAITS_QUERY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "associated": {"type": "string"}},
    "additionalProperties": False,
}

# --- providers ------------------------------------------------------------------------

PARENT_SCHEMA = {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]}


@lru_cache(maxsize=None)   # one object per version: jsonschemas keeps its validator
def list_query_schema(version):
    """Query schema of GET /resource_providers at `version`."""
    properties = {
        "name": {"type": "string"},
        "uuid": {"type": "string", "format": "uuid"},
    }
    if version >= PROVIDERS_MEMBER_OF:
        properties["member_of"] = {"type": "string"}
    if version >= PROVIDERS_RESOURCES:
        properties["resources"] = {"type": "string"}
    if version >= NESTED_PROVIDERS:
        properties["in_tree"] = {"type": "string", "format": "uuid"}
    if version >= PROVIDERS_REQUIRED:
        properties["required"] = {"type": "string"}
    return {"type": "object", "properties": properties, "additionalProperties": False}


@lru_cache(maxsize=None)   # one object per version: jsonschemas keeps its validator
def create_schema(version):
    properties = {
        "name": {"type": "string", "maxLength": 200},
        "uuid": {"type": "string", "format": "uuid"},
    }
    if version >= NESTED_PROVIDERS:
        properties["parent_provider_uuid"] = PARENT_SCHEMA
    return {"type": "object", "properties": properties, "required": ["name"],
            "additionalProperties": False}


@lru_cache(maxsize=None)   # one object per version: jsonschemas keeps its validator
def update_schema(version):
    properties = {"name": {"type": "string", "maxLength": 200}}
    if version >= NESTED_PROVIDERS:
        properties["parent_provider_uuid"] = PARENT_SCHEMA
    return {"type": "object", "properties": properties, "required": ["name"],
            "additionalProperties": False}


# --- inventories, aggregates, provider traits ------------------------------------------

# Built from the field ranges in providers.rules (inventories.md).
BASE_INVENTORY_SCHEMA = rules.record_schema(required=("total", "resource_provider_generation"))
POST_INVENTORY_SCHEMA = rules.record_schema(
    required=("total", "resource_class"),
    resource_class={"type": "string", "pattern": rules.NAME_REGEX})
PUT_INVENTORIES_SCHEMA = rules.inventories_schema()

AGGREGATES_SCHEMA = {"type": "array", "items": {"type": "string", "format": "uuid"},
                     "uniqueItems": True}
AGGREGATES_GENERATION_SCHEMA = {
    "type": "object",
    "properties": {"aggregates": AGGREGATES_SCHEMA,
                   "resource_provider_generation": {"type": "integer"}},
    "required": ["aggregates", "resource_provider_generation"],
    "additionalProperties": False,
}

PROVIDER_TRAITS_SCHEMA = {
    "type": "object",
    "properties": {
        "traits": {"type": "array",
                   "items": {"type": "string", "minLength": 1,
                             "maxLength": rules.MAX_NAME_LENGTH}},
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["traits", "resource_provider_generation"],
    "additionalProperties": False,
}

# --- the OpenAPI document ------------------------------------------------------------------

INVENTORY = obj({
    "total": {"type": "integer"}, "reserved": {"type": "integer"},
    "min_unit": {"type": "integer"}, "max_unit": {"type": "integer"},
    "step_size": {"type": "integer"}, "allocation_ratio": {"type": "number"}})

RESPONSE_SCHEMAS = {
    "ResourceClass": obj({"name": NAME, "links": LINKS}),
    "ResourceClasses": obj({"resource_classes": {
        "type": "array", "items": ref("ResourceClass")}}),
    "Traits": obj({"traits": {"type": "array", "items": NAME}}),
    "ProviderTraits": obj({"traits": {"type": "array", "items": NAME},
                           "resource_provider_generation": {"type": "integer"}}),
    "ResourceProvider": obj({
        "uuid": UUID, "name": NAME, "generation": {"type": "integer"},
        "parent_provider_uuid": {"anyOf": [UUID, {"type": "null"}]},
        "root_provider_uuid": UUID, "links": LINKS}),
    "ResourceProviders": obj({"resource_providers": {
        "type": "array", "items": ref("ResourceProvider")}}),
    "Inventory": obj(dict(INVENTORY["properties"],
                          resource_provider_generation={"type": "integer"})),
    "Inventories": obj({"resource_provider_generation": {"type": "integer"},
                        "inventories": mapping(INVENTORY)}),
    # aggregate uuids are echoed as they were sent (hyphens optional)
    "Aggregates": obj({"aggregates": {"type": "array", "items": {"type": "string"}},
                       "resource_provider_generation": {"type": "integer"}}),
}

_RP = "/resource_providers/{uuid}"
_INVENTORY = "/resource_providers/{uuid}/inventories/{resource_class}"

OPERATIONS = {
    ("/resource_classes", "get"): operation("List resource classes", {200: "ResourceClasses"}),
    ("/resource_classes", "post"): operation(
        "Create a custom resource class", {201: None}, body=RESOURCE_CLASS_BODY_SCHEMA),
    ("/resource_classes/{name}", "get"): operation(
        "Show a resource class", {200: "ResourceClass"}),
    ("/resource_classes/{name}", "put"): operation(
        "Create a custom resource class if missing", {201: None, 204: None}),
    ("/resource_classes/{name}", "delete"): operation(
        "Delete a custom resource class", {204: None}),
    ("/traits", "get"): operation("List traits", {200: "Traits"}, query=TRAITS_QUERY_SCHEMA),
    ("/traits/{name}", "get"): operation("Check a trait exists", {204: None}),
    ("/traits/{name}", "put"): operation(
        "Create a custom trait if missing", {201: None, 204: None}),
    ("/traits/{name}", "delete"): operation("Delete a custom trait", {204: None}),
    ("/resource_providers", "get"): operation(
        "List resource providers", {200: "ResourceProviders"},
        query=list_query_schema(LATEST)),
    ("/resource_providers", "post"): operation(
        "Create a resource provider", {200: "ResourceProvider"}, body=create_schema(LATEST)),
    (_RP, "get"): operation("Show a resource provider", {200: "ResourceProvider"}),
    (_RP, "put"): operation(
        "Update a resource provider", {200: "ResourceProvider"}, body=update_schema(LATEST)),
    (_RP, "delete"): operation("Delete a resource provider", {204: None}),
    (f"{_RP}/inventories", "get"): operation(
        "List a provider's inventories", {200: "Inventories"}),
    (f"{_RP}/inventories", "post"): operation(
        "Create one inventory", {201: "Inventory"}, body=POST_INVENTORY_SCHEMA),
    (f"{_RP}/inventories", "put"): operation(
        "Replace all inventories", {200: "Inventories"}, body=PUT_INVENTORIES_SCHEMA),
    (f"{_RP}/inventories", "delete"): operation("Delete all inventories", {204: None}),
    (_INVENTORY, "get"): operation("Show one inventory", {200: "Inventory"}),
    (_INVENTORY, "put"): operation(
        "Update one inventory", {200: "Inventory"}, body=BASE_INVENTORY_SCHEMA),
    (_INVENTORY, "delete"): operation("Delete one inventory", {204: None}),
    (f"{_RP}/aggregates", "get"): operation(
        "List a provider's aggregates", {200: "Aggregates"}),
    (f"{_RP}/aggregates", "put"): operation(
        "Replace a provider's aggregates", {200: "Aggregates"},
        body=AGGREGATES_GENERATION_SCHEMA),
    (f"{_RP}/traits", "get"): operation("List a provider's traits", {200: "ProviderTraits"}),
    (f"{_RP}/traits", "put"): operation(
        "Replace a provider's traits", {200: "ProviderTraits"}, body=PROVIDER_TRAITS_SCHEMA),
    (f"{_RP}/traits", "delete"): operation("Remove a provider's traits", {204: None}),
}

CREATES = (
    created("/resource_providers", "post", "200", _RP, {"uuid": "$response.body#/uuid"}),
    created(f"{_RP}/inventories", "post", "201", _INVENTORY,
            {"uuid": "$request.path.uuid", "resource_class": "$request.body#/resource_class"}),
    created("/resource_classes/{name}", "put", "201", "/resource_classes/{name}",
            {"name": "$request.path.name"}),
    created("/traits/{name}", "put", "201", "/traits/{name}", {"name": "$request.path.name"}),
)
