"""JSON schemas of allocations' API requests per microversion (allocation bodies, the
/usages query, the reshaper body), and allocations' part of the OpenAPI document:
OPERATIONS, RESPONSE_SCHEMAS and CREATES (foundation/api/openapi_parts.py).

The schemas are verbatim from allocations.md §3.2/§4.1, usages.md and reshaper.md; the
views validate with them and the project (placement_site/openapi.py) publishes them.
"""
import copy

from foundation.api.microversion import (
    ALLOCATION_PROJECT_USER,
    CONSUMER_GENERATIONS,
    CONSUMER_TYPES,
    DICT_ALLOCATIONS,
    MAPPINGS,
)
from foundation.api.microversion import MAX as LATEST
from foundation.api.openapi_parts import COUNT, created, mapping, obj, operation
from foundation.uuids import UUID_KEY_REGEX
from providers import rules
from providers.rules import GROUP_SUFFIX_REGEX, MAX_NAME_LENGTH, NAME_REGEX

UUID_KEY = UUID_KEY_REGEX

RESOURCES = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {NAME_REGEX: {"type": "integer", "minimum": 1}},
    "additionalProperties": False,
}
EXTERNAL_ID = {"type": "string", "minLength": 1, "maxLength": 255}

# PUT /allocations/{c}, 1.0 - 1.7: a list of {resource_provider: {uuid}, resources}.
PUT_V1_0 = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "resource_provider": {
                        "type": "object",
                        "properties": {"uuid": {"type": "string", "format": "uuid"}},
                        "required": ["uuid"],
                        "additionalProperties": False,
                    },
                    "resources": RESOURCES,
                },
                "required": ["resource_provider", "resources"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["allocations"],
    "additionalProperties": False,
}

# 1.8 - 1.11: plus project_id and user_id.
PUT_V1_8 = copy.deepcopy(PUT_V1_0)
PUT_V1_8["properties"]["project_id"] = EXTERNAL_ID
PUT_V1_8["properties"]["user_id"] = EXTERNAL_ID
PUT_V1_8["required"] = ["allocations", "project_id", "user_id"]

# 1.12 - 1.27: allocations keyed by provider uuid.
PUT_V1_12 = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "object",
            "minProperties": 1,
            "patternProperties": {
                UUID_KEY: {
                    "type": "object",
                    "properties": {
                        "generation": {"type": "integer"},
                        "resources": RESOURCES,
                    },
                    "required": ["resources"],
                    "additionalProperties": False,
                }
            },
            "additionalProperties": False,
        },
        "project_id": EXTERNAL_ID,
        "user_id": EXTERNAL_ID,
    },
    "required": ["allocations", "project_id", "user_id"],
    "additionalProperties": False,
}

# 1.28 - 1.33: empty allocations allowed; consumer_generation required.
PUT_V1_28 = copy.deepcopy(PUT_V1_12)
PUT_V1_28["properties"]["allocations"]["minProperties"] = 0
PUT_V1_28["properties"]["consumer_generation"] = {"type": ["integer", "null"]}
PUT_V1_28["required"].append("consumer_generation")

# 1.34 - 1.37: optional mappings (validated, then ignored).
MAPPINGS_SCHEMA = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {
        GROUP_SUFFIX_REGEX: {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "format": "uuid"},
        }
    },
}
PUT_V1_34 = copy.deepcopy(PUT_V1_28)
PUT_V1_34["properties"]["mappings"] = MAPPINGS_SCHEMA

# 1.38+: required consumer_type.
CONSUMER_TYPE = {"type": "string", "pattern": NAME_REGEX, "minLength": 1,
                 "maxLength": MAX_NAME_LENGTH}
PUT_V1_38 = copy.deepcopy(PUT_V1_34)
PUT_V1_38["properties"]["consumer_type"] = CONSUMER_TYPE
PUT_V1_38["required"].append("consumer_type")


def put_schema(version):
    for floor, schema in ((CONSUMER_TYPES, PUT_V1_38), (MAPPINGS, PUT_V1_34),
                          (CONSUMER_GENERATIONS, PUT_V1_28), (DICT_ALLOCATIONS, PUT_V1_12),
                          (ALLOCATION_PROJECT_USER, PUT_V1_8)):
        if version >= floor:
            return schema
    return PUT_V1_0


def _post(per_consumer):
    return {
        "type": "object",
        "minProperties": 1,
        "patternProperties": {UUID_KEY: per_consumer},
        "additionalProperties": False,
    }


_POST_V1_13_CONSUMER = copy.deepcopy(PUT_V1_12)
_POST_V1_13_CONSUMER["properties"]["allocations"]["minProperties"] = 0
POST_V1_13 = _post(_POST_V1_13_CONSUMER)
POST_V1_28 = _post(PUT_V1_28)
POST_V1_34 = _post(PUT_V1_34)
POST_V1_38 = _post(PUT_V1_38)


def post_schema(version):
    for floor, schema in ((CONSUMER_TYPES, POST_V1_38), (MAPPINGS, POST_V1_34),
                          (CONSUMER_GENERATIONS, POST_V1_28)):
        if version >= floor:
            return schema
    return POST_V1_13


# GET /usages query string.
USAGES_V1_9 = {
    "type": "object",
    "properties": {"project_id": EXTERNAL_ID, "user_id": EXTERNAL_ID},
    "required": ["project_id"],
    "additionalProperties": False,
}
USAGES_V1_38 = copy.deepcopy(USAGES_V1_9)
USAGES_V1_38["properties"]["consumer_type"] = {
    "type": "string", "pattern": NAME_REGEX + "|^all|^unknown$", "minLength": 1,
    "maxLength": MAX_NAME_LENGTH}


def usages_schema(version):
    return USAGES_V1_38 if version >= CONSUMER_TYPES else USAGES_V1_9


# --- POST /reshaper (reshaper.md) -----------------------------------------------------

# Each provider's entry is the PUT /resource_providers/{uuid}/inventories body.
PROVIDER_INVENTORIES = rules.inventories_schema()


def _reshaper(allocations_schema):
    allocations_schema = copy.deepcopy(allocations_schema)
    allocations_schema["minProperties"] = 0
    return {
        "type": "object",
        "properties": {
            "inventories": {
                "type": "object",
                "patternProperties": {UUID_KEY: PROVIDER_INVENTORIES},
                "minProperties": 1,
                "additionalProperties": False,
            },
            "allocations": allocations_schema,
        },
        "required": ["inventories", "allocations"],
        "additionalProperties": False,
    }


# allocations: the POST /allocations schema of the microversion, minProperties 0.
RESHAPER_V1_30 = _reshaper(POST_V1_28)
RESHAPER_V1_34 = _reshaper(POST_V1_34)
RESHAPER_V1_38 = _reshaper(POST_V1_38)


def reshaper_schema(version):
    if version >= CONSUMER_TYPES:
        return RESHAPER_V1_38
    if version >= MAPPINGS:
        return RESHAPER_V1_34
    return RESHAPER_V1_30


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
