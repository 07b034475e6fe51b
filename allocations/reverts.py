"""Undoing a change log entry from the operator UI ("Revert"): one click, one write.

A consumer's allocation change is undone by giving the consumer back the allocations
its entry's `before` recorded, in one allocations_replace() checked against the
consumer generation its `after` recorded (none, when the entry removed the consumer):
a consumer changed since the entry is a conflict, never overwritten. A provider's
inventory change is undone by providers.services.reverts. Each revert is itself a
write with its own change log entry.
"""
from allocations import selectors
from allocations.services import ConsumerAllocations, allocations_replace
from providers import exceptions
from providers.models import ChangeRecord
from providers.services.reverts import inventories_revertible, inventory_change_revert

CONSUMER_ACTIONS = ("allocations", "delete")


def allocations_revertible(record):
    """Whether `record` is a consumer allocation change recorded whole enough to undo."""
    return (record.kind == ChangeRecord.KIND_CONSUMER and record.action in CONSUMER_ACTIONS
            and (record.before is None or (isinstance(record.before, dict)
                                            and "allocations" in record.before)))


def allocations_freed(record):
    """What reverting the allocation entry `record` would free: [(provider uuid, class,
    held now, held after the revert)] of every allocation it removes or lowers, as the
    entry left them (the revert is refused if the consumer changed since)."""
    if not allocations_revertible(record):
        return []
    now = (record.after or {}).get("allocations", {})
    then = (record.before or {}).get("allocations", {})
    return [(rp, rc, amount, then.get(rp, {}).get(rc, 0))
            for rp, resources in sorted(now.items()) for rc, amount in sorted(resources.items())
            if then.get(rp, {}).get(rc, 0) < amount]


def revertible(record):
    return inventories_revertible(record) or allocations_revertible(record)


def change_revert(*, record_id):
    """Undo the change log entry `record_id`. Returns the entry.

    Raises ChangeNotFound, ChangeNotRevertible, ChangedSinceEntry (the entity changed
    after the entry),
    and the write's own refusals (capacity, inventory …).
    """
    record = ChangeRecord.objects.filter(id=record_id).first()
    if record is None:
        raise exceptions.ChangeNotFound(record_id)
    if inventories_revertible(record):
        inventory_change_revert(record=record)
    elif allocations_revertible(record):
        _allocations_revert(record)
    else:
        raise exceptions.ChangeNotRevertible(record)
    return record


def _allocations_revert(record):
    uuid = record.entity
    consumer = selectors.consumer_get(uuid=uuid)
    then = record.after["generation"] if record.after else None
    now = consumer.generation if consumer else None
    if then != now:
        raise exceptions.ChangedSinceEntry(f"Consumer {uuid}", then or "none (removed)",
                                           now or "none (removed)")
    wanted = (record.before or {}).get("allocations", {})
    project, user = _owner(record, consumer)
    if project is None:
        raise exceptions.ChangeNotRevertible(
            record, "the consumer's project and user are not in the change log")
    allocations_replace(consumers=[ConsumerAllocations(
        consumer_uuid=uuid, project_id=project, user_id=user,
        allocations={rp: dict(resources) for rp, resources in wanted.items()},
        consumer_type=None, generation=then)])


def _owner(record, consumer):
    """(project, user) of the consumer: as it is now, or (removed) as its latest entry
    that names them recorded it."""
    if consumer is not None:
        return consumer.project.external_id, consumer.user.external_id
    for after in (ChangeRecord.objects.filter(kind=ChangeRecord.KIND_CONSUMER, entity=record.entity,
                                              id__lte=record.id, after__isnull=False)
                  .order_by("-id").values_list("after", flat=True)[:20]):
        if isinstance(after, dict) and "project" in after:
            return after["project"], after["user"]
    return None, None


