"""Inventory invariants as pure functions (no database, no HTTP).

Used by providers.services.inventories, and reusable by the admin
(Model.clean / forms) and by allocation checks. See inventories.md and the
README "Domain overview".
"""
import re

MAX_INT = 2147483647
# Every resource class name has this form (searched, as JSON Schema patterns are).
CLASS_NAME_PATTERN = re.compile(r"^[A-Z0-9_]+$")

INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
INTEGER_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size")
INVENTORY_DEFAULTS = {
    "reserved": 0,
    "min_unit": 1,
    "max_unit": MAX_INT,
    "step_size": 1,
    "allocation_ratio": 1.0,
}

# Capacity rule names for inventory_capacity_error(): below microversion 1.26
# capacity must be > 0; from 1.26 it may be 0.
CAPACITY_POSITIVE = "positive"
CAPACITY_NON_NEGATIVE = "non_negative"


def with_defaults(record):
    """An inventory record restricted to the inventory fields, defaults filled in.

    Integer fields are returned as ints (JSON `5.0` passes the integer
    schema); `allocation_ratio` keeps the submitted value.
    """
    result = dict(INVENTORY_DEFAULTS)
    result.update({key: value for key, value in record.items() if key in INVENTORY_FIELDS})
    for key in INTEGER_FIELDS:
        if key in result:
            result[key] = int(result[key])
    return result


def capacity(total, reserved, allocation_ratio):
    """(total - reserved) * allocation_ratio, untruncated."""
    return (total - reserved) * allocation_ratio


def inventory_capacity_error(rc_name, provider_uuid, record, rule=CAPACITY_NON_NEGATIVE):
    """The message explaining why `record` has invalid capacity, or None if it is valid.

    `record` must have total, reserved and allocation_ratio (use with_defaults()).
    `rule` is CAPACITY_POSITIVE (< 1.26) or CAPACITY_NON_NEGATIVE (1.26+).
    Only capacity is cross-validated: min_unit > max_unit or max_unit > total
    are accepted, as upstream accepts them.
    """
    value = capacity(record["total"], record["reserved"], record["allocation_ratio"])
    prefix = f"Invalid inventory for '{rc_name}' on resource provider '{provider_uuid}'. "
    if rule == CAPACITY_POSITIVE and value <= 0:
        return prefix + "The reserved value is greater than or equal to total."
    if rule == CAPACITY_NON_NEGATIVE and value < 0:
        return prefix + "The reserved value is greater than total."
    return None


def fits(amount, *, used, total, reserved, allocation_ratio, min_unit, max_unit, step_size):
    """True when `amount` more can be allocated from one inventory record."""
    return (min_unit <= amount <= max_unit
            and amount % step_size == 0
            and used + amount <= capacity(total, reserved, allocation_ratio))
