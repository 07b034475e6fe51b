"""Allocation business rules as pure functions (no database access).

allocations.services gathers the facts inside its transaction (inventories,
usages read after the provider rows are locked) and asks these functions
whether the write set is acceptable; they raise the Placement error that the
first violated rule calls for (allocations.md §1.3 steps 4-5).
"""
from collections import OrderedDict
from dataclasses import dataclass

from allocations import exceptions
from foundation.uuids import canonical_uuid_or_none
from providers.rules import capacity as inventory_capacity


@dataclass(frozen=True)
class WriteRecord:
    """One (consumer, provider, class, amount) of the write set W.

    amount 0 marks a provider touched only because a consumer sent with an
    empty `allocations` object held something there.
    """

    consumer_uuid: str
    provider_id: int
    provider_uuid: str
    resource_class_id: int
    resource_class: str
    amount: int


@dataclass(frozen=True)
class InventoryLimits:
    total: int
    reserved: int
    min_unit: int
    max_unit: int
    step_size: int
    allocation_ratio: float

    @property
    def capacity(self):
        return inventory_capacity(self.total, self.reserved, self.allocation_ratio)


def canonical_consumer_uuid(value):
    """The canonical lower-case dashed form of a uuid-like string.

    Raises MalformedConsumerUuid unless `value` is uuid-like (foundation.uuids).
    """
    canonical = canonical_uuid_or_none(value)
    if canonical is None:
        raise exceptions.MalformedConsumerUuid(value)
    return canonical


def violates_constraints(amount, limits):
    """True if one requested amount breaks min_unit/max_unit/step_size."""
    return (amount < limits.min_unit or amount > limits.max_unit
            or amount % limits.step_size != 0)


def exceeds_capacity(new_usage, previous_usage, limits):
    """True if `new_usage` does not fit, unless it does not worsen an existing overcommit."""
    return new_usage > limits.capacity and new_usage > previous_usage


def move_refusal(amount, held, used, limits):
    """Why moving `amount` onto an inventory would be refused, or None if it fits.

    held: what the consumer already holds of the class there (the move adds to it);
    used: the inventory's usage now. The same tests as check_write_set's, for one
    record, so a target the move page offers is one the write accepts (barring a
    concurrent change). Returns (kind, message): kind "constraints" or "capacity".
    """
    total = held + amount
    if violates_constraints(total, limits):
        return ("constraints", f"{total} breaks min_unit {limits.min_unit}, max_unit "
                               f"{limits.max_unit}, step_size {limits.step_size}")
    if exceeds_capacity(used + amount, used, limits):
        free = max(int(limits.capacity) - used, 0)
        return ("capacity", f"needs {amount:,}, free {free:,} (capacity "
                            f"{int(limits.capacity):,}, used {used:,})")
    return None


def check_write_set(records, inventories, current_usage, own_usage):
    """Raise the first capacity/constraint violation of the write set, or return None.

    records: WriteRecords in request order (W, amount-0 records included).
    inventories: {(provider_id, resource_class_id): InventoryLimits} for the
        touched providers and the classes of W.
    current_usage: {(provider_id, resource_class_id): total used now}, i.e.
        prev_usage, read after the providers were locked.
    own_usage: {(provider_id, resource_class_id): used now by the consumers
        of this request} (these allocations are being replaced).
    Raises InvalidInventory, InvalidAllocationConstraints or CapacityExceeded
    (409 without a specific code).
    """
    classes = list(OrderedDict.fromkeys(r.resource_class for r in records))
    with_inventory = {provider_id for provider_id, _ in inventories}
    missing = list(OrderedDict.fromkeys(
        r.provider_uuid for r in records if r.provider_id not in with_inventory))
    if missing:
        raise exceptions.InvalidInventory(", ".join(classes), ", ".join(missing))

    requested = {}
    for record in records:
        key = (record.provider_id, record.resource_class_id)
        requested[key] = requested.get(key, 0) + record.amount

    for record in records:
        if record.amount <= 0:
            continue
        key = (record.provider_id, record.resource_class_id)
        limits = inventories.get(key)
        if limits is None:
            raise exceptions.InvalidInventory(record.resource_class, record.provider_uuid)
        if violates_constraints(record.amount, limits):
            raise exceptions.InvalidAllocationConstraints(
                record.resource_class, record.provider_uuid)
        previous = current_usage.get(key, 0)
        others = previous - own_usage.get(key, 0)
        if exceeds_capacity(others + requested[key], previous, limits):
            raise exceptions.CapacityExceeded(
                record.resource_class, record.provider_uuid, record.consumer_uuid)
    return None
