"""JSON schemas of allocation request bodies and the /usages query, per microversion.

Verbatim from allocations.md §3.2/§4.1 and usages.md.
"""
import copy

from placement_site.api.microversion import (
    ALLOCATION_PROJECT_USER,
    CONSUMER_GENERATIONS,
    CONSUMER_TYPES,
    DICT_ALLOCATIONS,
    MAPPINGS,
)
from placement_site.uuids import UUID_KEY_REGEX
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
