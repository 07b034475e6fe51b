"""The reshaper: move inventory and its allocations between providers atomically.

reshape() replaces the inventories of a set of providers and the
allocations of a set of consumers in ONE transaction (reshaper.md). It
validates exactly as the separate endpoints do, because it calls their
service cores inside its own transaction instead of re-implementing them:

* inventories: providers.services.inventories.write_inventories() (the
  core of PUT .../inventories; it opens no transaction of its own), with no
  capacity rule (reshaper Quirk: `reserved > total` is accepted);
* allocations: allocations.services.allocations_prepare() (consumer
  generations, provider existence, classes) and allocations_apply() (locks,
  capacity/constraint checks against the interim inventory, writes), the
  two halves of POST /allocations.

Order (reshaper.md "Processing"): 1. each inventory provider exists and has
the given generation (body order); 2.-3. allocations_prepare(); 4. interim
inventory = current records merged with the new ones, for providers whose
new inventory is non-empty (+1 generation each); 5. allocations_apply()
(+1 for every touched provider); 6. final inventory = exactly the new set,
for every listed provider (+1; removing a class with allocations -> 409
placement.inventory.inuse). Any error rolls everything back, including
consumer records created for the request. The change log gets one entry per
provider and consumer ("reshape": first before -> last after).

Concurrency: before reading anything the transaction locks (SELECT ... FOR
UPDATE, ascending id, the order allocations_apply() uses) every provider it
may write: the inventory providers, the providers named in the new
allocations and those the named consumers hold allocations on now. The
later compare-and-swap updates then only touch rows already held, so a
reshape cannot deadlock with allocation writers, and the generation checks
of step 1 read committed, locked values. A conflict detected anyway is a
409 placement.concurrent_update "update conflict: ..." (no retry: the
client's provider generations would be stale after a concurrent change).
"""
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Q

from allocations import exceptions as allocation_exceptions
from allocations.models import Allocation
from allocations.services import allocations_apply, allocations_prepare
from allocations.exceptions import (
    MalformedReshaperData,
    ProviderNotFoundInInventories,
    ReshapeConflict,
    ReshapeGenerationConflict,
)
from foundation import db_retry
from providers.exceptions import UnknownResourceClass
from providers.models import ResourceProvider
from providers.services import change_log
from providers.services.inventories import write_inventories


@dataclass
class ProviderInventories:
    """The complete new inventory of one provider ({} removes all of it)."""

    provider_uuid: str
    generation: int
    inventories: dict  # {resource class name: record dict (defaults filled in on write)}


class _UnknownAllocationClass(Exception):
    """Raised through allocations_prepare() so the class is reported at step 5."""

    def __init__(self, name):
        super().__init__(name)
        self.name = name


@db_retry.retrying
def reshape(*, inventories, consumers):
    """Atomically replace provider inventories and consumer allocations.

    Args:
        inventories: list of ProviderInventories, in body order (at least one).
        consumers: list of allocations.services.ConsumerAllocations, in body
            order (may be empty).
    Raises (see reshaper.md "Errors"): ProviderNotFoundInInventories (400),
    ReshapeGenerationConflict / ConsumerGenerationConflict (409
    placement.concurrent_update), ProviderDoesNotExist (400),
    MalformedReshaperData (400), InventoryInUse placement.inventory.inuse (409),
    InvalidInventoryValue (400, only when called around the API's schema),
    InvalidInventory / InvalidAllocationConstraints / CapacityExceeded (409),
    ReshapeConflict "update conflict: ..." (409). All are domain errors.
    """
    try:
        with transaction.atomic(), change_log.change_batch("reshape"):
            # one change log entry per provider and consumer, inserted at the end
            _reshape(inventories, consumers)
    except allocation_exceptions.AllocationWriteConflict as exc:
        raise ReshapeConflict(exc.message)
    except IntegrityError as exc:  # a concurrent insert of a consumer or allocation row
        raise ReshapeConflict(str(exc).strip())
    # A deadlock or serialization failure rises to db_retry.run, which starts the
    # whole transaction over (the database has rolled it back).


def _reshape(inventories, consumers):
    _lock_providers(inventories, consumers)

    # 1. Inventory providers exist and have the generation the client saw.
    providers = {rp.uuid: rp for rp in ResourceProvider.objects.filter(
        uuid__in=[item.provider_uuid for item in inventories])}
    for item in inventories:
        provider = providers.get(item.provider_uuid)
        if provider is None:
            raise ProviderNotFoundInInventories(item.provider_uuid)
        if provider.generation != item.generation:
            raise ReshapeGenerationConflict(item.provider_uuid, provider.generation,
                                            item.generation)

    # 2.-3. Consumer generations and allocation providers, as POST /allocations.
    # An unknown allocation class is only reported after the interim inventory
    # (where upstream resolves classes), so an unknown inventory class wins.
    unknown_allocation_class = None
    try:
        plan = allocations_prepare(consumers=consumers, on_unknown_class=_UnknownAllocationClass)
    except _UnknownAllocationClass as exc:
        plan, unknown_allocation_class = None, exc.name

    # 4. Interim inventory: current records plus the new ones.
    for item in inventories:
        if item.inventories:
            _write(providers[item.provider_uuid], item.inventories, remove_missing=False)
    if unknown_allocation_class is not None:
        raise MalformedReshaperData(unknown_allocation_class)

    # 5. Allocations, checked against the interim inventory.
    touched = set()
    if consumers:
        allocations_apply(plan)
        touched = {record.provider_id for record in plan.records}

    # 6. Final inventory: exactly the new set.
    for item in inventories:
        provider = providers[item.provider_uuid]
        if provider.pk in touched:
            provider.generation += 1  # allocations_apply() bumped it in the database
        _write(provider, item.inventories, remove_missing=True)


def _write(provider, records, remove_missing):
    try:
        write_inventories(provider=provider, inventories=records, generation=None,
                          remove_missing=remove_missing, capacity_rule=None,
                          error_prefix="")
    except UnknownResourceClass as exc:
        raise MalformedReshaperData(exc.name)


def _lock_providers(inventories, consumers):
    """Row-lock, in ascending id order, every provider this reshape may write."""
    uuids = {item.provider_uuid for item in inventories}
    uuids.update(rp_uuid for consumer in consumers for rp_uuid in consumer.allocations)
    held = (Allocation.objects
            .filter(consumer__uuid__in=[c.consumer_uuid for c in consumers])
            .values("provider_id"))
    list(ResourceProvider.objects.select_for_update()
         .filter(Q(uuid__in=uuids) | Q(id__in=held))
         .order_by("id").values_list("id", flat=True))
