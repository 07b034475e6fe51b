"""The JSON bodies and queries allocations' writes take, per microversion, and their
translation into the services' arguments: the API's views and the `reshape` command
take them alike.

The schemas are verbatim from allocations.md §3.2/§4.1, usages.md and reshaper.md;
allocations/api/schemas.py publishes them in the OpenAPI document.
"""
import copy

from django.conf import settings

from allocations import services
from allocations.reshaper import ProviderInventories
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


# --- from a validated body to the services' arguments -------------------------------------

def consumer_request(version, consumer_uuid, data):
    """One consumer's validated body (any microversion's form) -> ConsumerAllocations."""
    if version >= DICT_ALLOCATIONS:
        allocations = {rp_uuid: entry["resources"]
                       for rp_uuid, entry in data["allocations"].items()}
    else:
        # List form: a provider named twice keeps its later entry.
        allocations = {item["resource_provider"]["uuid"]: item["resources"]
                       for item in data["allocations"]}
    if version >= ALLOCATION_PROJECT_USER:
        project_id, user_id = data["project_id"], data["user_id"]
    else:
        project_id = settings.PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID
        user_id = settings.PLACEMENT_INCOMPLETE_CONSUMER_USER_ID
    return services.ConsumerAllocations(
        consumer_uuid=consumer_uuid,
        project_id=project_id,
        user_id=user_id,
        allocations=allocations,
        consumer_type=data["consumer_type"] if version >= CONSUMER_TYPES else None,
        generation=(data["consumer_generation"] if version >= CONSUMER_GENERATIONS
                    else services.UNCHECKED),
    )


def reshape_arguments(version, data):
    """The keyword arguments of reshaper.reshape() for a body valid at `version`."""
    inventories = [
        ProviderInventories(provider_uuid=rp_uuid,
                            generation=entry["resource_provider_generation"],
                            inventories=entry["inventories"])
        for rp_uuid, entry in data["inventories"].items()
    ]
    consumers = [consumer_request(version, consumer_uuid, body)
                 for consumer_uuid, body in data["allocations"].items()]
    return {"inventories": inventories, "consumers": consumers}
