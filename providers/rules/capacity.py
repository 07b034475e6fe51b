"""How much of an inventory consumers may use (inventories.md "Capacity").

capacity() is the one Python formula. Where the database must compute it
(filters over many providers, the over-capacity health check),
providers.querysets.capacity_expression() is its SQL twin; a test holds them
equal (tests/providers/test_capacity_twins.py).
"""
import math

from providers import exceptions

# Capacity rules for inventory_capacity_error(): below microversion 1.26 capacity must
# be > 0; from 1.26 it may be 0.
CAPACITY_POSITIVE = "positive"
CAPACITY_NON_NEGATIVE = "non_negative"


# The operator UI's forms refuse a negative ratio with this, in place of the API's
# "reserved value is greater than total", which the negative capacity it makes would draw.
NEGATIVE_RATIO = ("The allocation ratio cannot be negative: capacity is (total − reserved) × "
                  "allocation ratio.")


def capacity(total, reserved, allocation_ratio):
    """(total - reserved) * allocation_ratio, untruncated (a float for a float ratio).

    Every "fits" test compares an integer usage with this value, and
    `n <= x` equals `n <= floor(x)` for an integer n, so no test needs to truncate.
    """
    return (total - reserved) * allocation_ratio


def reported_capacity(total, reserved, allocation_ratio):
    """The capacity allocation candidates report: truncated to an integer
    (allocation-candidates.md §5, provider_summaries `capacity`)."""
    return math.trunc(capacity(total, reserved, allocation_ratio))


def inventory_capacity_error(rc_name, provider_uuid, record, rule=CAPACITY_NON_NEGATIVE):
    """The message explaining why `record` has invalid capacity, or None if it is valid.

    `record` must have total, reserved and allocation_ratio (use with_defaults()).
    `rule` is CAPACITY_POSITIVE (< 1.26) or CAPACITY_NON_NEGATIVE (1.26+).
    Only capacity is cross-validated: min_unit > max_unit or max_unit > total
    are accepted, as Placement accepts them (inventories.md).
    """
    value = capacity(record["total"], record["reserved"], record["allocation_ratio"])
    prefix = f"Invalid inventory for '{rc_name}' on resource provider '{provider_uuid}'. "
    if rule == CAPACITY_POSITIVE and value <= 0:
        return prefix + "The reserved value is greater than or equal to total."
    if rule == CAPACITY_NON_NEGATIVE and value < 0:
        return prefix + "The reserved value is greater than total."
    return None


def check_capacity(rc_name, provider_uuid, record, rule, *, prefix=""):
    """Raise InvalidInventoryCapacity (message `prefix` + Placement's) unless `record`
    satisfies `rule`; None means no check (the reshaper)."""
    if rule is None:
        return
    message = inventory_capacity_error(rc_name, provider_uuid, record, rule)
    if message:
        raise exceptions.InvalidInventoryCapacity(prefix + message)


def unallocatable(min_unit, max_unit, step_size):
    """Why an inventory can take no allocation whatever its capacity, or None: no amount
    is both within min_unit..max_unit and a multiple of step_size. Placement accepts such
    a record (so does the API here); the console warns of it and the status page lists it."""
    if min_unit > max_unit:
        return f"min_unit {min_unit} is above max_unit {max_unit}"
    smallest = -(-min_unit // step_size) * step_size   # the first multiple >= min_unit
    if smallest > max_unit:
        return (f"no multiple of step_size {step_size} lies between min_unit {min_unit} "
                f"and max_unit {max_unit}")
    return None
