"""Errors raised by allocations' services, selectors, rules and the reshaper.

Domain errors (foundation.domain_errors) carrying Placement's wording
(allocations.md §3.3, usages.md, reshaper.md) and code; none of them knows
HTTP (foundation/api/exceptions.py maps the kinds to statuses).
"""
from foundation import domain_errors as codes
from foundation.domain_errors import ConcurrentUpdate, Conflict, InvalidInput, NotFound

ALLOCATION_CONFLICT_PREFIX = "Inventory and/or allocations changed while attempting to allocate: "


class MalformedConsumerUuid(InvalidInput):
    def __init__(self, value):
        super().__init__(f"Malformed consumer_uuid: {value}")


class ProviderDoesNotExist(InvalidInput):
    """A provider named in new allocations does not exist (checked before writing)."""

    def __init__(self, uuid):
        super().__init__(f"Allocation for resource provider '{uuid}' that does not exist.")


class NoSuchResourceClass(InvalidInput):
    """A class named in the write set does not exist. PUT and POST word it differently."""

    def __init__(self, name, consumer_uuid=None):
        if consumer_uuid is not None:
            detail = (f"Unable to allocate inventory for consumer {consumer_uuid}: "
                      f"No such resource class {name}.")
        else:
            detail = f"Unable to allocate inventory No such resource class {name}."
        super().__init__(detail)


class InvalidInventory(Conflict):
    """The provider has no inventory of the class(es). No specific error code."""

    def __init__(self, classes, providers):
        super().__init__(
            f"Unable to allocate inventory: Inventory for '{classes}' on resource "
            f"provider '{providers}' invalid.")


class InvalidAllocationConstraints(Conflict):
    def __init__(self, resource_class, provider_uuid):
        super().__init__(
            f"Unable to allocate inventory: Unable to create allocation for "
            f"'{resource_class}' on resource provider '{provider_uuid}'. The requested "
            f"amount would violate inventory constraints.")


class CapacityExceeded(Conflict):
    def __init__(self, resource_class, provider_uuid, consumer_uuid=None):
        self.resource_class = resource_class
        self.provider_uuid = provider_uuid
        self.consumer_uuid = consumer_uuid  # who asked (the operators' event names it)
        super().__init__(
            f"Unable to allocate inventory: Unable to create allocation for "
            f"'{resource_class}' on resource provider '{provider_uuid}'. The requested "
            f"amount would exceed the capacity.")


class ConsumerGenerationConflict(ConcurrentUpdate):
    """The client's consumer_generation is not the consumer's current one (1.28+)."""

    def __init__(self, expected, got):
        expected_text = "null" if expected is None else expected
        got_text = "None" if got is None else got
        super().__init__(
            f"consumer generation conflict - expected {expected_text} but got {got_text}")


class AllocationWriteConflict(ConcurrentUpdate):
    """A provider or consumer changed underneath an allocation write.

    Raised by allocations_replace_in_transaction(); allocations_replace()
    retries on it in a fresh transaction, and renders it as a 409
    placement.concurrent_update once the retries are used up.
    """

    def __init__(self, reason="resource provider or consumer generation conflict"):
        super().__init__(ALLOCATION_CONFLICT_PREFIX + reason)


class ProviderGenerationMismatch(ConcurrentUpdate):
    """A provider's generation is not the one the caller saw (operator UI moves).

    Unlike AllocationWriteConflict it is not retried: the caller decided on a
    state that is gone.
    """

    def __init__(self, provider_uuid, expected, current):
        super().__init__(
            f"resource provider {provider_uuid} generation conflict - expected {expected} "
            f"but the provider is at generation {current}")


class AllocationNotHeld(InvalidInput):
    """A move names an allocation the consumer does not hold (operator UI)."""

    def __init__(self, consumer_uuid, provider_uuid, resource_class):
        super().__init__(f"Consumer {consumer_uuid} holds no {resource_class} on resource "
                         f"provider {provider_uuid}.")


class MoveToSameProvider(InvalidInput):
    def __init__(self, provider_uuid, resource_class):
        super().__init__(f"The {resource_class} allocation is already on resource provider "
                         f"{provider_uuid}: choose another provider.")


class ConsumerAllocationsNotFound(NotFound):
    def __init__(self, consumer_uuid):
        super().__init__(f"No allocations for consumer '{consumer_uuid}'")


class ConsumerVanished(NotFound):
    def __init__(self, consumer_uuid):
        super().__init__(f"Allocation for consumer with id {consumer_uuid} not found.")


class ProviderNotFoundForAllocations(NotFound):
    """GET /resource_providers/{uuid}/allocations on an unknown provider."""

    def __init__(self, uuid):
        super().__init__(
            f"Resource provider '{uuid}' not found: No resource provider with uuid "
            f"{uuid} found")


class ProviderNotFoundForUsages(NotFound):
    """GET /resource_providers/{uuid}/usages on an unknown provider: Placement repeats it."""

    def __init__(self, uuid):
        missing = f"No resource provider with uuid {uuid} found"
        super().__init__(f"{missing}: {missing}")


# --- the reshaper (reshaper.md "Errors") -------------------------------------------


class ProviderNotFoundInInventories(InvalidInput):
    code = codes.RESOURCE_PROVIDER_NOT_FOUND

    def __init__(self, uuid):
        super().__init__(f"Resource provider {uuid} in inventories not found: "
                         f"No resource provider with uuid {uuid} found")


class ReshapeGenerationConflict(ConcurrentUpdate):
    def __init__(self, uuid, actual, given):
        super().__init__(f"resource provider generation conflict for provider {uuid}: "
                         f"actual: {actual}, given: {given}")


class MalformedReshaperData(InvalidInput):
    def __init__(self, resource_class):
        super().__init__(f"malformed reshaper data: No such resource class {resource_class}.")


class ReshapeConflict(ConcurrentUpdate):
    """Something changed underneath the reshape (a lost race, a deadlock)."""

    def __init__(self, reason):
        super().__init__(f"update conflict: {reason}")


class TreeMoveDoesNotFit(InvalidInput):
    """A whole-host move whose allocations do not all fit in the target tree (operator UI)."""

    def __init__(self, target, reasons):
        super().__init__(f"The consumer's allocations do not fit on {target}: "
                         + "; ".join(reasons) + ".")


class NoSuchHost(InvalidInput):
    """A whole-host move names a provider (as a host, or any provider of its tree) that
    does not exist (operator UI)."""

    def __init__(self, given):
        super().__init__(f"No resource provider is named or has the uuid “{given}”.")


class NothingHeldInTree(InvalidInput):
    """A whole-host move from a tree where the consumer holds nothing, while it holds
    allocations elsewhere (operator UI)."""

    def __init__(self, consumer_uuid, root_uuid):
        super().__init__(f"Consumer {consumer_uuid} holds nothing in the tree of resource "
                         f"provider {root_uuid}.")


class TreeMoveToSameTree(InvalidInput):
    def __init__(self, root_uuid):
        super().__init__(f"The allocations are already in the tree of resource provider "
                         f"{root_uuid}: choose another host.")
