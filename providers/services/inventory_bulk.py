"""One resource class's allocation_ratio and/or reserved changed across many providers.

The operator UI's bulk edit previews a change (console.providers.bulk_reads) and then
applies it here, provider by provider: each is its own inventory_set() (PUT
.../inventories/{rc}) with the generation its preview row was computed with, in
its own transaction. A provider changed since the preview is a conflict and
is left alone; the others are written.
"""
from dataclasses import dataclass

from foundation.domain_errors import ConcurrentUpdate, DomainError
from providers import exceptions, rules
from providers.models import Inventory, ResourceProvider
from providers.services.inventories import GENERATION_CONFLICT, inventory_set

APPLIED, CONFLICT, REFUSED = "applied", "conflict", "refused"


@dataclass(frozen=True)
class BulkOutcome:
    """What happened to one provider: APPLIED (with its new generation), CONFLICT (it
    changed since the preview) or REFUSED (the service's message)."""

    provider_uuid: str
    provider_name: str
    status: str
    message: str = ""
    generation: int | None = None


def inventories_bulk_update(*, resource_class, targets, changes):
    """Set `changes` on the `resource_class` inventory of each target provider.

    Args:
        resource_class: the class name.
        targets: [(provider uuid, generation)]: the generation each provider had when
            the change was previewed.
        changes: some of {"allocation_ratio": float, "reserved": int}; the other
            fields of each record stay as they are.
    Returns [BulkOutcome] in `targets` order. Refusals are outcomes, never raised:
    each provider is written (or not) on its own.
    Queries: two reads, then one inventory_set() per provider.
    """
    uuids = [uuid for uuid, _ in targets]
    providers = {p.uuid: p for p in ResourceProvider.objects.filter(uuid__in=uuids)}
    records = {inv.provider_id: {field: getattr(inv, field) for field in rules.INVENTORY_FIELDS}
               for inv in Inventory.objects.filter(provider__uuid__in=uuids,
                                                   resource_class__name=resource_class)}
    def write(provider, generation):
        record = records.get(provider.id)
        if record is None:
            # inventory_set's order: the generation first, then the missing record.
            if generation != provider.generation:
                raise exceptions.ProviderGenerationConflict(GENERATION_CONFLICT)
            raise exceptions.NoSuchInventory(provider.uuid, resource_class)
        inventory_set(provider=provider, resource_class=resource_class,
                      generation=generation, record={**record, **changes})

    return [outcome_of(uuid, providers.get(uuid), lambda p, g=generation: write(p, g))
            for uuid, generation in targets]


def outcome_of(uuid, provider, write):
    """The BulkOutcome of one provider of a bulk edit: write(provider) run on its own,
    its refusal an outcome (never raised). None when write() returns False: nothing to
    write there."""
    name = provider.name if provider is not None else uuid
    try:
        if provider is None:
            raise exceptions.ProviderNotFound(uuid)
        if write(provider) is False:
            return None
    except ConcurrentUpdate as exc:
        return BulkOutcome(uuid, name, CONFLICT, exc.message)
    except DomainError as exc:
        return BulkOutcome(uuid, name, REFUSED, exc.message)
    return BulkOutcome(uuid, name, APPLIED, generation=provider.generation)
