"""Undoing inventory changes from the change log (the operator UI's "Revert").

An entry is reverted by writing its `before` back through inventories_replace(),
checked against the generation its `after` recorded: if the provider changed since
the entry (a newer write), the revert is refused as a conflict, never applied over
the newer change. The revert is itself a write with its own change log entry.

A batch (the entries one request wrote, such as a bulk edit: one request id) is
reverted entry by entry, each on its own (as the bulk edit applied it): a provider
changed since is reported and left alone, the others are reverted.
"""
from foundation.domain_errors import ConcurrentUpdate, DomainError
from providers import exceptions
from providers.models import ChangeRecord, ResourceProvider
from providers.rules import INVENTORY_FIELDS
from providers.services.inventories import inventories_replace
from providers.services.inventory_bulk import APPLIED, CONFLICT, REFUSED, BulkOutcome

INVENTORY_ACTIONS = ("inventories", "inventory_delete")


def inventories_revertible(record):
    """Whether `record` is a provider inventory change this module can undo."""
    return (record.kind == ChangeRecord.KIND_PROVIDER and record.action in INVENTORY_ACTIONS
            and isinstance(record.before, dict) and "inventories" in record.before
            and isinstance(record.after, dict) and "generation" in record.after)


def inventory_change_revert(*, record):
    """Put the provider's inventory back as it was before `record`.

    "inventories" entries hold the whole set before; an "inventory_delete" entry the
    class deleted, which is added back to the current set. Raises ChangeNotRevertible,
    ProviderNotFound, ChangedSinceEntry, and inventories_replace()'s refusals.
    """
    if not inventories_revertible(record):
        raise exceptions.ChangeNotRevertible(record)
    provider = ResourceProvider.objects.filter(uuid=record.entity).first()
    if provider is None:
        raise exceptions.ProviderNotFound(record.entity)
    then = record.after["generation"]
    if provider.generation != then:
        raise exceptions.ChangedSinceEntry(f"Resource provider {provider.name}", then,
                                           provider.generation)
    wanted = dict(record.before["inventories"])
    if record.action == "inventory_delete":
        current = {inv.resource_class.name: {f: getattr(inv, f) for f in INVENTORY_FIELDS}
                   for inv in provider.inventories.select_related("resource_class")}
        wanted = {**current, **wanted}
    inventories_replace(provider=provider, generation=then, inventories=wanted)
    return provider


def batch_entries(request_id, actions=INVENTORY_ACTIONS):
    """The provider entries of `actions` (default: inventory changes) one request wrote
    (a bulk edit's batch), in order."""
    if not request_id:
        return ChangeRecord.objects.none()
    return ChangeRecord.objects.filter(request_id=request_id, kind=ChangeRecord.KIND_PROVIDER,
                                       action__in=actions).order_by("id")


def batch_revert(*, request_id):
    """Revert each inventory entry of the batch on its own. Returns [BulkOutcome]:
    APPLIED (reverted), CONFLICT (changed since) or REFUSED (the service's message)."""
    records = list(batch_entries(request_id))
    names = dict(ResourceProvider.objects.filter(uuid__in=[r.entity for r in records])
                 .values_list("uuid", "name"))
    outcomes = []
    for record in records:
        name = names.get(record.entity, record.entity)
        try:
            provider = inventory_change_revert(record=record)
        except ConcurrentUpdate as exc:
            outcomes.append(BulkOutcome(record.entity, name, CONFLICT, exc.message))
        except DomainError as exc:
            outcomes.append(BulkOutcome(record.entity, name, REFUSED, exc.message))
        else:
            outcomes.append(BulkOutcome(record.entity, name, APPLIED,
                                        generation=provider.generation))
    return outcomes
