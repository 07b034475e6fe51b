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

from placement_site.api import errors
from placement_site.api.exceptions import BadRequest, ConcurrentUpdate, Conflict, NotFound
from providers import exceptions, rules
from providers.models import Inventory, ResourceClass
from providers.services.providers import provider_bump_generation

GENERATION_CONFLICT = "resource provider generation conflict"


class UnknownResourceClass(BadRequest):
    """A record names a class that does not exist; `.name` is the class name."""

    def __init__(self, name, detail):
        super().__init__(detail)
        self.name = name


def _resolve_classes(names):
    """{name: id} for existing classes; the first unknown name (in order) or None."""
    found = dict(ResourceClass.objects.filter(name__in=list(names)).values_list("name", "id"))
    missing = next((name for name in names if name not in found), None)
    return found, missing


def _classes_in_use(provider, rc_ids):
    """Names of the classes among `rc_ids` that have allocations on `provider`.

    In class id order (standard classes first, in their canonical order), as Placement
    lists them in its in-use message.
    """
    if not rc_ids:
        return []
    rows = (provider.allocations.filter(resource_class_id__in=list(rc_ids))
            .values_list("resource_class_id", "resource_class__name").distinct())
    return [name for _, name in sorted(set(rows))]


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
    records = {name: rules.with_defaults(record) for name, record in inventories.items()
               if rules.CLASS_NAME_PATTERN.search(name)}
    if capacity_rule is not None:
        for name, record in records.items():
            message = rules.inventory_capacity_error(name, provider.uuid, record, capacity_rule)
            if message:
                raise BadRequest(error_prefix + message)
    class_ids, missing = _resolve_classes(list(inventories))
    if missing is not None:
        raise UnknownResourceClass(missing, f"{error_prefix}No such resource class {missing}.")

    # Swap first: the row lock it takes serialises concurrent writers of this provider.
    provider_bump_generation(provider, generation,
                             detail=f"update conflict: {GENERATION_CONFLICT}")

    existing = {inv.resource_class_id: inv
                for inv in Inventory.objects.filter(provider=provider)}
    wanted = {class_ids[name]: record for name, record in records.items()}
    if remove_missing:
        removed = set(existing) - set(wanted)
        in_use = _classes_in_use(provider, removed)
        if in_use:
            raise Conflict(
                f"update conflict: Inventory for '{', '.join(in_use)}' on resource provider "
                f"'{provider.uuid}' in use.", code=errors.INVENTORY_INUSE)
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
        raise ConcurrentUpdate(
            "update conflict: the inventory was changed by another request; please retry.")
    return records


def inventories_replace(*, provider, generation, inventories,
                        capacity_rule=rules.CAPACITY_NON_NEGATIVE):
    """PUT .../inventories: replace the whole inventory of `provider`.

    Returns the written records ({name: record}); provider.generation is the
    new generation (+1, even when nothing changed).
    Raises ProviderGenerationConflict, BadRequest (capacity, unknown class),
    Conflict (placement.inventory.inuse).
    """
    prefix = f"Unable to update inventory for resource provider {provider.uuid}: "
    try:
        with transaction.atomic():
            return write_inventories(provider=provider, inventories=inventories,
                                     generation=generation, capacity_rule=capacity_rule,
                                     error_prefix=prefix)
    except UnknownResourceClass as exc:
        raise BadRequest(
            f"Unknown resource class in inventory for resource provider {provider.uuid}: "
            f"No such resource class {exc.name}.")


def inventory_create(*, provider, resource_class, record,
                     capacity_rule=rules.CAPACITY_NON_NEGATIVE):
    """POST .../inventories: add one class (no generation check, Quirk).

    Returns the written record; provider.generation is the new generation.
    Raises BadRequest (capacity, unknown class), ConcurrentUpdate (the class
    already has inventory, or concurrent change).
    """
    prefix = f"Unable to create inventory for resource provider {provider.uuid}: "
    with transaction.atomic():
        wanted = {resource_class: record}
        written = _validated_single(provider, wanted, capacity_rule, prefix)
        if Inventory.objects.filter(provider=provider,
                                    resource_class__name=resource_class).exists():
            raise ConcurrentUpdate(
                f"Update conflict: Inventory for '{resource_class}' on resource provider "
                f"'{provider.uuid}' already exists.")
        write_inventories(provider=provider, inventories=wanted, remove_missing=False,
                          capacity_rule=None)
    return written[resource_class]


def _validated_single(provider, wanted, capacity_rule, prefix):
    """Capacity, then class existence, for one record (messages of POST/PUT {rc})."""
    records = {name: rules.with_defaults(record) for name, record in wanted.items()}
    for name, record in records.items():
        message = rules.inventory_capacity_error(name, provider.uuid, record, capacity_rule)
        if message:
            raise BadRequest(prefix + message)
    _, missing = _resolve_classes(list(records))
    if missing is not None:
        raise BadRequest(f"{prefix}No such resource class {missing}.")
    return records


def inventory_set(*, provider, resource_class, generation, record,
                  capacity_rule=rules.CAPACITY_NON_NEGATIVE):
    """PUT .../inventories/{rc}: replace one existing record (never creates).

    Order: generation (409) -> capacity (400) -> unknown class (404) -> no
    such inventory (400) -> write (+1).
    Returns the written record; provider.generation is the new generation.
    """
    prefix = f"Unable to update inventory for resource provider {provider.uuid}: "
    with transaction.atomic():
        if generation != provider.generation:
            raise exceptions.ProviderGenerationConflict(GENERATION_CONFLICT)
        record = rules.with_defaults(record)
        message = rules.inventory_capacity_error(resource_class, provider.uuid, record,
                                                 capacity_rule)
        if message:
            raise BadRequest(prefix + message)
        if not ResourceClass.objects.filter(name=resource_class).exists():
            raise NotFound(f"No such resource class {resource_class}.")
        if not Inventory.objects.filter(provider=provider,
                                        resource_class__name=resource_class).exists():
            raise BadRequest(
                f"No inventory record with resource class for resource provider "
                f"{provider.uuid}: No inventory of class {resource_class} found.")
        write_inventories(provider=provider, inventories={resource_class: record},
                          generation=generation, remove_missing=False, capacity_rule=None)
    return record


def inventory_delete(*, provider, resource_class):
    """DELETE .../inventories/{rc}: remove one record (no generation check).

    Raises NotFound (unknown class / no such inventory), ConcurrentUpdate
    (the inventory has allocations — Quirk: code concurrent_update — or a
    concurrent change). Generation +1.
    """
    with transaction.atomic():
        rc = ResourceClass.objects.filter(name=resource_class).first()
        if rc is None:
            raise NotFound(f"No inventory of class {resource_class} found for delete: "
                           f"No such resource class {resource_class}.")
        if not Inventory.objects.filter(provider=provider, resource_class=rc).exists():
            missing = f"No inventory of class {resource_class} found for delete"
            raise NotFound(f"{missing}: {missing}")  # Placement repeats it
        provider_bump_generation(provider, detail=(
            f"Unable to delete inventory of class {resource_class}: the inventory was "
            "updated by another process. Please retry your request."))
        if provider.allocations.filter(resource_class=rc).exists():
            raise ConcurrentUpdate(
                f"Unable to delete inventory of class {resource_class}: Inventory for "
                f"'{resource_class}' on resource provider '{provider.uuid}' in use.")
        Inventory.objects.filter(provider=provider, resource_class=rc).delete()


def inventories_delete(*, provider):
    """DELETE .../inventories (1.5+): remove every record, no generation check.

    Raises Conflict (placement.inventory.inuse) when any class has
    allocations, ConcurrentUpdate on a concurrent change. Generation +1 even
    when there was no inventory.
    """
    with transaction.atomic():
        provider_bump_generation(provider, detail=(
            f"Unable to delete inventory for resource provider {provider.uuid} because the "
            "inventory was updated by another process. Please retry your request."))
        rc_ids = set(Inventory.objects.filter(provider=provider)
                     .values_list("resource_class_id", flat=True))
        in_use = _classes_in_use(provider, rc_ids)
        if in_use:
            raise Conflict(
                f"Inventory for '{', '.join(in_use)}' on resource provider "
                f"'{provider.uuid}' in use.", code=errors.INVENTORY_INUSE)
        Inventory.objects.filter(provider=provider).delete()
