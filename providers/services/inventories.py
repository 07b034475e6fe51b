"""Writes to provider inventories (inventories.md).

Structure:

* ``write_inventories(...)`` is the core. It opens NO transaction of its own,
  so the reshaper can call it (twice per provider) inside its own outer
  transaction. It validates, compare-and-swaps the provider generation (+1)
  and writes the rows.
* ``inventories_replace``, ``inventory_create``, ``inventory_set``,
  ``inventory_delete`` and ``inventories_delete`` are the API-level services:
  each wraps its work in ``transaction.atomic()`` and produces the error
  messages of its endpoint.

Records are dicts with the inventory fields (see providers.rules); missing
optional fields get their defaults. Capacity rules are passed in as
``capacity_rule`` (rules.CAPACITY_POSITIVE below microversion 1.26,
rules.CAPACITY_NON_NEGATIVE from 1.26, None for no check — the reshaper).
"""
from django.db import IntegrityError, transaction
from django.utils import timezone

from foundation import db_retry

from providers import exceptions, rules, usage
from providers.models import Inventory, ResourceClass
from providers.services import change_log
from providers.services.providers import provider_bump_generation

GENERATION_CONFLICT = "resource provider generation conflict"


def _resolve_classes(names):
    """{name: id} for existing classes; the first unknown name (in order) or None."""
    found = dict(ResourceClass.objects.filter(name__in=list(names)).values_list("name", "id"))
    missing = next((name for name in names if name not in found), None)
    return found, missing


def write_inventories(*, provider, inventories, generation=None, remove_missing=True,
                      capacity_rule=rules.CAPACITY_NON_NEGATIVE, error_prefix=""):
    """Core of every inventory write; MUST be called inside transaction.atomic().

    Args:
        provider: ResourceProvider (its in-memory generation is used when
            `generation` is None, and is updated to the new value).
        inventories: {resource class name: record dict} — the new records.
        generation: generation the client sent; a mismatch with the current
            value is a 409 before anything else is checked.
        remove_missing: True replaces the whole inventory (classes absent from
            `inventories` are deleted); False merges (the reshaper's interim
            step keeps classes that are about to be removed).
        capacity_rule: see module docstring.
        error_prefix: prepended to the capacity and unknown-class messages.
    Order: generation (409 placement.concurrent_update) -> capacity of each
    record (400) -> unknown class (UnknownResourceClass, 400) -> generation
    compare-and-swap (409) -> removed class in use (409
    placement.inventory.inuse, "update conflict: Inventory for '<RC>, ...' on
    resource provider '<uuid>' in use.").
    Returns {name: record with defaults} as written. Generation +1 always.
    """
    if generation is not None and generation != provider.generation:
        raise exceptions.ProviderGenerationConflict(GENERATION_CONFLICT)
    # Body schemas validate records only under keys of the class-name form. No class
    # has another name, so such a key fails below as unknown, its record unread.
    records = {name: rules.inventory_record(name, provider.uuid, record)
               for name, record in inventories.items() if rules.CLASS_NAME_PATTERN.search(name)}
    for name, record in records.items():
        rules.check_capacity(name, provider.uuid, record, capacity_rule, prefix=error_prefix)
    class_ids, missing = _resolve_classes(list(inventories))
    if missing is not None:
        raise exceptions.UnknownResourceClass(
            missing, f"{error_prefix}No such resource class {missing}.")

    # Swap first: the row lock it takes serialises concurrent writers of this provider.
    old_generation = provider.generation if generation is None else generation
    provider_bump_generation(provider, generation,
                             detail=f"update conflict: {GENERATION_CONFLICT}")

    existing = {inv.resource_class_id: inv
                for inv in Inventory.objects.filter(provider=provider)
                .select_related("resource_class")}
    before = {inv.resource_class.name: _logged(inv) for inv in existing.values()}
    wanted = {class_ids[name]: record for name, record in records.items()}
    if remove_missing:
        removed = set(existing) - set(wanted)
        in_use = usage.classes_in_use(provider, removed)
        if in_use:
            raise exceptions.InventoryInUse(provider.uuid, in_use, prefix="update conflict: ")
        if removed:
            Inventory.objects.filter(provider=provider, resource_class_id__in=removed).delete()

    now = timezone.now()
    to_create, to_update = [], []
    for rc_id, record in wanted.items():
        row = existing.get(rc_id)
        if row is None:
            to_create.append(Inventory(provider=provider, resource_class_id=rc_id, **record))
            continue
        for key, value in record.items():
            setattr(row, key, value)
        row.updated_at = now
        to_update.append(row)
    try:
        with transaction.atomic():
            if to_create:
                Inventory.objects.bulk_create(to_create)
            if to_update:
                Inventory.objects.bulk_update(
                    to_update, list(rules.INVENTORY_FIELDS) + ["updated_at"])
    except IntegrityError:
        raise exceptions.ProviderChangedConcurrently(
            "update conflict: the inventory was changed by another request; please retry.")
    after = {} if remove_missing else dict(before)
    after.update(records)
    _record_inventories(provider, old_generation, before, after)
    return records


def _logged(inventory):
    """An Inventory row as the change log keeps it: {field: value}."""
    return {field: getattr(inventory, field) for field in rules.INVENTORY_FIELDS}


def _record_inventories(provider, old_generation, before, after):
    change_log.change_record(
        kind=change_log.PROVIDER, entity=provider.uuid, action="inventories",
        before={"generation": old_generation, "inventories": before},
        after={"generation": provider.generation,
               "inventories": {name: dict(record) for name, record in after.items()}})


@db_retry.retrying
def inventories_replace(*, provider, generation, inventories,
                        capacity_rule=rules.CAPACITY_NON_NEGATIVE):
    """PUT .../inventories: replace the whole inventory of `provider`.

    Returns the written records ({name: record}); provider.generation is the
    new generation (+1, even when nothing changed).
    Raises ProviderGenerationConflict, InvalidInventoryValue, InvalidInventoryCapacity,
    UnknownResourceClass, InventoryInUse.
    """
    prefix = f"Unable to update inventory for resource provider {provider.uuid}: "
    try:
        with transaction.atomic():
            return write_inventories(provider=provider, inventories=inventories,
                                     generation=generation, capacity_rule=capacity_rule,
                                     error_prefix=prefix)
    except exceptions.UnknownResourceClass as exc:
        raise exceptions.UnknownResourceClass(
            exc.name, f"Unknown resource class in inventory for resource provider {provider.uuid}: "
            f"No such resource class {exc.name}.")


@db_retry.retrying
def inventory_create(*, provider, resource_class, record,
                     capacity_rule=rules.CAPACITY_NON_NEGATIVE):
    """POST .../inventories: add one class (no generation check, Quirk).

    Returns the written record; provider.generation is the new generation.
    Raises InvalidInventoryValue, InvalidInventoryCapacity, UnknownResourceClass,
    InventoryExists (Quirk: concurrent_update), ProviderChangedConcurrently.
    """
    prefix = f"Unable to create inventory for resource provider {provider.uuid}: "
    with transaction.atomic():
        wanted = {resource_class: record}
        written = _validated_single(provider, wanted, capacity_rule, prefix)
        if Inventory.objects.filter(provider=provider,
                                    resource_class__name=resource_class).exists():
            raise exceptions.InventoryExists(provider.uuid, resource_class)
        write_inventories(provider=provider, inventories=wanted, remove_missing=False,
                          capacity_rule=None)
    return written[resource_class]


def _validated_single(provider, wanted, capacity_rule, prefix):
    """Field ranges and capacity, then class existence, for one record (messages of POST)."""
    records = {name: rules.inventory_record(name, provider.uuid, record)
               for name, record in wanted.items()}
    for name, record in records.items():
        rules.check_capacity(name, provider.uuid, record, capacity_rule, prefix=prefix)
    _, missing = _resolve_classes(list(records))
    if missing is not None:
        raise exceptions.UnknownResourceClass(missing, f"{prefix}No such resource class {missing}.")
    return records


@db_retry.retrying
def inventory_set(*, provider, resource_class, generation, record,
                  capacity_rule=rules.CAPACITY_NON_NEGATIVE):
    """PUT .../inventories/{rc}: replace one existing record (never creates).

    Order: generation (409) -> field ranges, capacity (400) -> unknown class (404) -> no
    such inventory (400) -> write (+1).
    Returns the written record; provider.generation is the new generation.
    """
    prefix = f"Unable to update inventory for resource provider {provider.uuid}: "
    with transaction.atomic():
        if generation != provider.generation:
            raise exceptions.ProviderGenerationConflict(GENERATION_CONFLICT)
        record = rules.inventory_record(resource_class, provider.uuid, record)
        rules.check_capacity(resource_class, provider.uuid, record, capacity_rule,
                             prefix=prefix)
        if not ResourceClass.objects.filter(name=resource_class).exists():
            raise exceptions.ResourceClassNotFound(resource_class)
        if not Inventory.objects.filter(provider=provider,
                                        resource_class__name=resource_class).exists():
            raise exceptions.NoSuchInventory(provider.uuid, resource_class)
        write_inventories(provider=provider, inventories={resource_class: record},
                          generation=generation, remove_missing=False, capacity_rule=None)
    return record


@db_retry.retrying
def inventory_delete(*, provider, resource_class):
    """DELETE .../inventories/{rc}: remove one record (no generation check).

    Raises ResourceClassNotFound / InventoryNotFound, InventoryInUseOnDelete
    (Quirk: code concurrent_update), ProviderGenerationConflict on a concurrent
    change. Generation +1.
    """
    with transaction.atomic():
        rc = ResourceClass.objects.filter(name=resource_class).first()
        if rc is None:
            raise exceptions.ResourceClassNotFound(
                resource_class, prefix=f"No inventory of class {resource_class} found for "
                                       "delete: ")
        removed = Inventory.objects.filter(provider=provider, resource_class=rc).first()
        if removed is None:
            missing = f"No inventory of class {resource_class} found for delete"
            raise exceptions.InventoryNotFound(f"{missing}: {missing}")  # Placement repeats it
        old_generation = provider.generation
        provider_bump_generation(provider, detail=(
            f"Unable to delete inventory of class {resource_class}: the inventory was "
            "updated by another process. Please retry your request."))
        if usage.class_in_use(rc, provider):
            raise exceptions.InventoryInUseOnDelete(provider.uuid, resource_class)
        Inventory.objects.filter(provider=provider, resource_class=rc).delete()
        # Only the class deleted is known here (one row read): the others stay as they were.
        change_log.change_record(
            kind=change_log.PROVIDER, entity=provider.uuid, action="inventory_delete",
            before={"generation": old_generation,
                    "inventories": {resource_class: _logged(removed)}},
            after={"generation": provider.generation, "inventories": {}})


@db_retry.retrying
def inventories_delete(*, provider):
    """DELETE .../inventories (1.5+): remove every record, no generation check.

    Raises InventoryInUse (placement.inventory.inuse) when any class has
    allocations, ProviderGenerationConflict on a concurrent change. Generation +1 even
    when there was no inventory.
    """
    with transaction.atomic():
        old_generation = provider.generation
        provider_bump_generation(provider, detail=(
            f"Unable to delete inventory for resource provider {provider.uuid} because the "
            "inventory was updated by another process. Please retry your request."))
        rows = list(Inventory.objects.filter(provider=provider).select_related("resource_class"))
        in_use = usage.classes_in_use(provider, {inv.resource_class_id for inv in rows})
        if in_use:
            raise exceptions.InventoryInUse(provider.uuid, in_use)
        Inventory.objects.filter(provider=provider).delete()
        _record_inventories(provider, old_generation,
                            {inv.resource_class.name: _logged(inv) for inv in rows}, {})
