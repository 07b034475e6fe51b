"""The fields of an inventory record: ranges, defaults, types (inventories.md).

The numbers live here once. The API's JSON schemas are built from them
(record_schema()), the services refuse values outside them
(inventory_record()), Inventory.clean() reports them to the admin
(field_problems()), and the database constraints of Inventory are built from
INTEGER_BOUNDS as the last net.
"""
import math

from providers import exceptions
from providers.rules.names import NAME_REGEX

MAX_INT = 2147483647
# allocation_ratio has an upper bound only (the largest float32); 0 and negative
# ratios are stored when the capacity rule lets them through (inventories.md).
MAX_ALLOCATION_RATIO = 3.40282e+38

# field: (smallest, largest) value
INTEGER_BOUNDS = {
    "total": (1, MAX_INT),
    "reserved": (0, MAX_INT),
    "min_unit": (1, MAX_INT),
    "max_unit": (1, MAX_INT),
    "step_size": (1, MAX_INT),
}
INTEGER_FIELDS = tuple(INTEGER_BOUNDS)
INVENTORY_FIELDS = (*INTEGER_FIELDS, "allocation_ratio")
INVENTORY_DEFAULTS = {
    "reserved": 0,
    "min_unit": 1,
    "max_unit": MAX_INT,
    "step_size": 1,
    "allocation_ratio": 1.0,
}


def record_schema(*, required=("total",), **extra_properties):
    """The JSON schema of one inventory record (inventories.md "Schemas").

    `extra_properties` are added (e.g. POST's `resource_class`).
    """
    properties = {"resource_provider_generation": {"type": "integer"}}
    for field, (smallest, largest) in INTEGER_BOUNDS.items():
        properties[field] = {"type": "integer", "minimum": smallest, "maximum": largest}
    properties["allocation_ratio"] = {"type": "number", "maximum": MAX_ALLOCATION_RATIO}
    properties.update(extra_properties)
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def inventories_schema():
    """The body of PUT .../inventories (and of each provider in POST /reshaper)."""
    return {
        "type": "object",
        "properties": {
            "resource_provider_generation": {"type": "integer"},
            "inventories": {
                "type": "object",
                "patternProperties": {NAME_REGEX: record_schema()},
            },
        },
        "required": ["resource_provider_generation", "inventories"],
        "additionalProperties": False,
    }


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def field_problems(record):
    """{field: problem} for every inventory field of `record` outside its range.

    Integer fields take ints or integral floats (JSON `5.0` passes the API's
    integer schema); `total` is required, the rest default.
    """
    problems = {}
    if record.get("total") is None:
        problems["total"] = "total is required."
    for field, (smallest, largest) in INTEGER_BOUNDS.items():
        value = record.get(field)
        if value is None:
            continue
        if not (_is_number(value) and float(value).is_integer()
                and smallest <= value <= largest):
            problems[field] = (f"{field} must be an integer from {smallest} to {largest}; "
                               f"got {value!r}.")
    ratio = record.get("allocation_ratio")
    if ratio is not None and not (_is_number(ratio) and math.isfinite(ratio)
                                  and ratio <= MAX_ALLOCATION_RATIO):
        problems["allocation_ratio"] = (
            f"allocation_ratio must be a number up to {MAX_ALLOCATION_RATIO}; got {ratio!r}.")
    return problems


def with_defaults(record):
    """An inventory record restricted to the inventory fields, defaults filled in.

    Integer fields are returned as ints (JSON `5.0` passes the integer
    schema); `allocation_ratio` keeps the submitted value.
    """
    result = dict(INVENTORY_DEFAULTS)
    result.update({key: value for key, value in record.items()
                   if key in INVENTORY_FIELDS and value is not None})
    for key in INTEGER_FIELDS:
        if key in result:
            result[key] = int(result[key])
    return result


def inventory_record(rc_name, provider_uuid, record):
    """`record` with defaults, after checking every field's range.

    Raises InvalidInventoryValue naming the first field out of range.
    """
    problems = field_problems(record)
    if problems:
        raise exceptions.InvalidInventoryValue(
            f"Invalid inventory for '{rc_name}' on resource provider '{provider_uuid}': "
            + " ".join(problems.values()))
    return with_defaults(record)
