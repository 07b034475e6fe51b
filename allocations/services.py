"""Writes to allocations and consumers (allocations.md §1, §3-§5).

Public entry points:

* allocations_replace(consumers=[ConsumerAllocations, ...], on_unknown_class=...)
  -- PUT /allocations/{c} and POST /allocations. Owns its transaction and
  retries internally on concurrent changes.
* allocations_replace_in_transaction(...) -- the same write, for callers that
  already hold a transaction (the reshaper); or its two halves
  allocations_prepare(...) (read-only checks) and allocations_apply(plan)
  (locks, capacity checks, writes) when other writes go between them.
* allocations_delete(consumer_uuid=...) -- DELETE /allocations/{c}.

The operator's generation-checked edits of one consumer (move or remove one
allocation, remove all) are allocations_replace() calls too: allocations/edits.py.

Every write records its change log entries (providers.services.change_log) in its
transaction: one INSERT, with what the write read and wrote anyway.

Concurrency (PostgreSQL, several server processes): no table locks. Inside
the transaction every touched provider row is locked in ascending id order
(SELECT ... ORDER BY id FOR UPDATE). Only once those row locks are held are
inventories and usages read (READ COMMITTED gives each statement a fresh
snapshot), so the capacity check sees every committed competing write; it runs
before anything is written, so a refused claim costs little. Then the
providers' generations are bumped with a compare-and-swap UPDATE (on PostgreSQL
the bump is part of the locking statement, one round trip fewer: a refused
claim's rollback undoes it), then
projects/users/types are created if new, then the consumer rows are written
(compare-and-swap on their generation, ascending uuid order). Any detected conflict raises
AllocationWriteConflict; allocations_replace() then starts over in a fresh
transaction with fresh reads. The fixed lock order (providers -> projects ->
users -> consumer types -> consumers -> allocation rows) avoids deadlocks.
SQLite serialises writers with IMMEDIATE transactions instead.
"""
import logging
import random
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone

from allocations import exceptions, rules, usage
from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from foundation import db_retry
from foundation.ops import events
from providers.models import ResourceProvider
from providers.services import change_log

LOG = logging.getLogger(__name__)

UNCHECKED = object()  # consumer_generation not given (writes below microversion 1.28)


@dataclass
class ConsumerAllocations:
    """The complete new allocation set of one consumer.

    allocations: {provider_uuid: {resource_class_name: amount}}; {} removes all.
    consumer_type: a type name, or None to leave an existing consumer's type
        unchanged (new consumers are then untyped) -- writes below 1.38.
    generation: UNCHECKED (below 1.28), None ("the consumer has no
        allocations") or the consumer generation the client last saw.
    """

    consumer_uuid: str
    project_id: str
    user_id: str
    allocations: dict
    consumer_type: str | None = None
    generation: object = UNCHECKED


@dataclass
class WritePlan:
    """What allocations_prepare() read and checked; consumed by allocations_apply()."""

    consumers: list
    existing: dict  # consumer uuid -> {"id", "generation"}
    records: list  # rules.WriteRecord in request order
    resource_class_ids: dict = field(default_factory=dict)
    # [{project: id}, {user: id}, {consumer type: id}] of the names that existed
    named: list = field(default_factory=lambda: [{}, {}, {}])
    # provider id -> (uuid, generation the caller saw); see allocations_replace()
    provider_generations: dict = field(default_factory=dict)


def post_unknown_class(name):
    """The POST /allocations (and default) wording for an unknown class."""
    return exceptions.NoSuchResourceClass(name)


def put_unknown_class(consumer_uuid):
    """The PUT /allocations/{c} wording, which names the consumer."""
    return lambda name: exceptions.NoSuchResourceClass(name, consumer_uuid=consumer_uuid)


def allocations_replace(*, consumers, on_unknown_class=post_unknown_class,
                        provider_generations=None):
    """Atomically give every consumer in `consumers` exactly its new allocations.

    consumers: list of ConsumerAllocations, in request (body) order.
    on_unknown_class: name -> exception for a resource class that does not exist.
    provider_generations: optional {provider uuid: generation the caller saw}
        (the operator UI's moves; the API has no such check): each is compared
        with the provider's generation once it is locked, whether or not the
        write touches that provider.
    Retries up to settings.PLACEMENT_ALLOCATION_CONFLICT_RETRY_COUNT times in a
    fresh transaction when a concurrent write is detected.
    Raises ConsumerGenerationConflict, ProviderDoesNotExist, NoSuchResourceClass,
    ProviderGenerationMismatch, InvalidInventory, InvalidAllocationConstraints,
    CapacityExceeded, AllocationWriteConflict (retries exhausted).
    """
    retries = max(0, settings.PLACEMENT_ALLOCATION_CONFLICT_RETRY_COUNT)
    for attempt in range(retries + 1):
        try:
            with transaction.atomic():
                allocations_replace_in_transaction(
                    consumers=consumers, on_unknown_class=on_unknown_class,
                    provider_generations=provider_generations)
            return
        except exceptions.AllocationWriteConflict as exc:
            conflict = exc
        except IntegrityError as exc:  # a concurrent insert of the same consumer/allocation
            conflict = exceptions.AllocationWriteConflict(str(exc).strip() or "integrity error")
        except OperationalError as exc:
            # Inside a transaction someone else opened (the API's), the database has
            # rolled it all back: the outermost db_retry.run starts it over.
            if not db_retry.is_retryable(exc) or connection.in_atomic_block:
                raise
            conflict = exceptions.AllocationWriteConflict("deadlock detected")
        LOG.debug("allocation write conflict (attempt %d): %s", attempt + 1, conflict.message)
        if attempt < retries:
            events.allocation_write_retried(
                [c.consumer_uuid for c in consumers], attempt + 1, conflict.message)
            # Small jitter so the losers of a race do not collide again in lock-step.
            time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
    raise conflict


def allocations_replace_in_transaction(*, consumers, on_unknown_class=post_unknown_class,
                                       provider_generations=None):
    """allocations_replace() without its own transaction or retries.

    Must run inside transaction.atomic(). Raises the same errors; on a
    concurrent change AllocationWriteConflict (a 409 placement.concurrent_update),
    after which the caller's transaction must be rolled back (and may be retried).
    """
    plan = allocations_prepare(consumers=consumers, on_unknown_class=on_unknown_class,
                               provider_generations=provider_generations)
    allocations_apply(plan)


def allocations_prepare(*, consumers, on_unknown_class=post_unknown_class,
                        provider_generations=None):
    """Read-only checks of an allocation write, in Placement's order.

    1. consumer generations (body order; 409 ConsumerGenerationConflict),
    2. every provider named in new allocations (and in provider_generations,
       see allocations_replace) exists (400 ProviderDoesNotExist),
    3. every resource class exists (400, on_unknown_class(name)).
    Returns a WritePlan for allocations_apply() in the same transaction.
    """
    uuids = [c.consumer_uuid for c in consumers]
    provider_uuids = list(dict.fromkeys(
        [rp_uuid for wanted in consumers for rp_uuid in wanted.allocations]
        + list(provider_generations or ())))
    class_names = list(dict.fromkeys(
        name for wanted in consumers for resources in wanted.allocations.values()
        for name in resources))
    existing, providers, class_ids, *named = _names_to_ids(
        uuids, provider_uuids, class_names,
        sorted({c.project_id for c in consumers}), sorted({c.user_id for c in consumers}),
        sorted({c.consumer_type for c in consumers if c.consumer_type is not None}))

    for wanted in consumers:
        if wanted.generation is UNCHECKED:
            continue
        current = existing.get(wanted.consumer_uuid)
        current_generation = current["generation"] if current else None
        if current_generation != wanted.generation:
            raise exceptions.ConsumerGenerationConflict(current_generation, wanted.generation)
    for rp_uuid in provider_uuids:
        if rp_uuid not in providers:
            raise exceptions.ProviderDoesNotExist(rp_uuid)
    for name in class_names:
        if name not in class_ids:
            raise on_unknown_class(name)

    # What the consumers sent with an empty allocations object hold now: those
    # providers are touched too (records with amount 0).
    clearing = [existing[c.consumer_uuid]["id"] for c in consumers
                if not c.allocations and c.consumer_uuid in existing]
    held = {}
    for row in (Allocation.objects.filter(consumer_id__in=clearing)
                .order_by("id")
                .values("consumer__uuid", "provider_id", "provider__uuid",
                        "resource_class_id", "resource_class__name")):
        held.setdefault(row["consumer__uuid"], []).append(row)

    records = []
    for wanted in consumers:
        if wanted.allocations:
            for rp_uuid, resources in wanted.allocations.items():
                for name, amount in resources.items():
                    records.append(rules.WriteRecord(
                        wanted.consumer_uuid, providers[rp_uuid], rp_uuid,
                        class_ids[name], name, amount))
        else:
            for row in held.get(wanted.consumer_uuid, []):
                records.append(rules.WriteRecord(
                    wanted.consumer_uuid, row["provider_id"], row["provider__uuid"],
                    row["resource_class_id"], row["resource_class__name"], 0))
    return WritePlan(consumers=list(consumers), existing=existing, records=records,
                     resource_class_ids=class_ids, named=named,
                     provider_generations={providers[rp_uuid]: (rp_uuid, generation)
                                           for rp_uuid, generation
                                           in (provider_generations or {}).items()})


def allocations_apply(plan):
    """Lock, check capacity and write a prepared allocation write (see module doc).

    Must run inside the transaction that ran allocations_prepare().
    Raises InvalidInventory, InvalidAllocationConstraints, CapacityExceeded,
    AllocationWriteConflict.
    """
    now = timezone.now()
    records = plan.records
    touched = sorted({r.provider_id for r in records})
    # PostgreSQL locks and bumps in one statement (a refused write's rollback undoes the
    # bump); elsewhere the bump waits for the capacity check below.
    bumped_at_lock = connection.vendor == "postgresql"
    if bumped_at_lock:
        old_generations = _lock_and_bump_providers(touched, plan.provider_generations, now)
    else:
        generations = _lock_providers(touched, plan.provider_generations)

    # Checked as soon as the providers are locked, before anything is written: a claim
    # refused for capacity (a scheduler's lost race) costs three statements, not six.
    class_ids = sorted({r.resource_class_id for r in records})
    existing_ids = [row["id"] for row in plan.existing.values()]
    limits, current_usage, own_usage = usage.write_set_usage(touched, class_ids, existing_ids)
    try:
        rules.check_write_set(records, limits, current_usage, own_usage)
    except exceptions.CapacityExceeded as refused:
        events.capacity_refused(  # counted and logged for operators
            refused.consumer_uuid, refused.provider_uuid, refused.resource_class)
        raise

    if not bumped_at_lock:
        old_generations = _bump_provider_generations(touched, generations, now)
    consumer_ids = _write_consumers(plan, now)

    held = _delete_allocations(existing_ids)
    Allocation.objects.bulk_create([
        Allocation(consumer_id=consumer_ids[r.consumer_uuid], provider_id=r.provider_id,
                   resource_class_id=r.resource_class_id, used=r.amount, created_at=now)
        for r in records if r.amount > 0
    ])
    emptied = [plan.existing[c.consumer_uuid]["id"] for c in plan.consumers
               if not c.allocations and c.consumer_uuid in plan.existing]
    if emptied:
        Consumer.objects.filter(id__in=emptied).delete()
    change_log.changes_record(_allocation_changes(plan, old_generations, held))


@db_retry.retrying
def allocations_delete(*, consumer_uuid):
    """Remove all allocations of a consumer and the consumer (no generation check).

    Provider generations are not incremented (Quirk). Raises
    ConsumerAllocationsNotFound / ConsumerVanished (404).
    """
    with transaction.atomic():
        consumer = (Consumer.objects.select_for_update().filter(uuid=consumer_uuid)
                    .values("id", "generation").first())
        # The rows themselves rather than exists(): the change log's "before", same query count.
        rows = [] if consumer is None else list(
            Allocation.objects.filter(consumer_id=consumer["id"])
            .values_list("provider__uuid", "resource_class__name", "used").order_by("id"))
        if not rows:
            raise exceptions.ConsumerAllocationsNotFound(consumer_uuid)
        deleted, _ = Allocation.objects.filter(consumer_id=consumer["id"]).delete()
        if not deleted:
            raise exceptions.ConsumerVanished(consumer_uuid)
        Consumer.objects.filter(id=consumer["id"]).delete()
        held = {}
        for rp_uuid, rc_name, used in rows:
            held.setdefault(rp_uuid, {})[rc_name] = used
        change_log.changes_record([
            change_log.Change(change_log.CONSUMER, consumer_uuid, "delete",
                              before={"generation": consumer["generation"], "allocations": held}),
            *[change_log.Change(change_log.PROVIDER, rp_uuid, "allocations",
                                before={"consumers": {consumer_uuid: resources}},
                                after={"consumers": {consumer_uuid: {}}})
              for rp_uuid, resources in held.items()],
        ])


# --- internals ------------------------------------------------------------------


# The look-ups of an allocation write in one round trip: the consumers (id and
# generation), the providers, resource classes, projects, users and consumer types (id)
# it names. (Projects, users and types are never deleted: their ids hold once read.)
_LOOKUPS = (
    "SELECT 0, uuid, id, generation FROM consumers WHERE uuid IN ({marks})",
    "SELECT 1, uuid, id, 0 FROM resource_providers WHERE uuid IN ({marks})",
    "SELECT 2, name, id, 0 FROM resource_classes WHERE name IN ({marks})",
    "SELECT 3, external_id, id, 0 FROM projects WHERE external_id IN ({marks})",
    "SELECT 4, external_id, id, 0 FROM users WHERE external_id IN ({marks})",
    "SELECT 5, name, id, 0 FROM consumer_types WHERE name IN ({marks})",
)


def _names_to_ids(*wanted):
    """For the six lists of names of _LOOKUPS, in its order: {name: id} of those that
    exist ({uuid: {"id", "uuid", "generation"}} for the consumers), read in one
    statement."""
    parts, params = [], []
    for select, names in zip(_LOOKUPS, wanted):
        if names:
            parts.append(select.format(marks=", ".join(["%s"] * len(names))))
            params += names
    found = tuple({} for _ in _LOOKUPS)
    if parts:
        with connection.cursor() as cursor:
            cursor.execute(" UNION ALL ".join(parts), params)
            for kind, name, row_id, generation in cursor.fetchall():
                found[kind][name] = ({"id": row_id, "uuid": name, "generation": generation}
                                     if kind == 0 else row_id)
    return found

def _lock_providers(provider_ids, expected=None):
    """Lock the providers in id order; {provider id: generation} of provider_ids.

    expected: {provider id: (uuid, generation the caller saw)}; those providers
    are locked too (one ascending pass with the others) and their generations
    checked.
    Raises ProviderGenerationMismatch, AllocationWriteConflict.
    """
    expected = expected or {}
    lock_ids = sorted(set(provider_ids) | set(expected))
    if not lock_ids:
        return {}
    locked = list(ResourceProvider.objects.select_for_update()
                  .filter(id__in=lock_ids).order_by("id").values_list("id", "generation"))
    if len(locked) != len(lock_ids):
        raise exceptions.AllocationWriteConflict("a resource provider was deleted")
    current = dict(locked)
    for provider_id, (rp_uuid, generation) in expected.items():
        if current[provider_id] != generation:
            raise exceptions.ProviderGenerationMismatch(rp_uuid, generation,
                                                        current[provider_id])
    return {provider_id: current[provider_id] for provider_id in provider_ids}


# The providers a write names locked in id order (FOR UPDATE in a CTE is run once, and
# in READ COMMITTED returns the newest committed version of a row it waited for), and
# the generation of those it writes to bumped, in one round trip. The capacity read
# that follows stays a statement of its own: only a statement begun after the lock sees
# what the lock waited for.
LOCK_AND_BUMP_SQL = """
    WITH locked AS (
        SELECT id, generation FROM resource_providers
        WHERE id = ANY(%s::bigint[]) ORDER BY id FOR UPDATE),
    bumped AS (
        UPDATE resource_providers rp SET generation = rp.generation + 1, updated_at = %s
        FROM locked WHERE rp.id = locked.id AND rp.id = ANY(%s::bigint[]) RETURNING rp.id)
    SELECT id, generation, (SELECT COUNT(*) FROM bumped) FROM locked"""


def _lock_and_bump_providers(provider_ids, expected, now):
    """_lock_providers() and _bump_provider_generations() in one statement (PostgreSQL):
    lock the providers of provider_ids and of expected in id order, check expected's
    generations, bump those of provider_ids. Returns {provider id: generation before the
    write} of provider_ids.
    Raises ProviderGenerationMismatch, AllocationWriteConflict."""
    expected = expected or {}
    lock_ids = sorted(set(provider_ids) | set(expected))
    if not lock_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(LOCK_AND_BUMP_SQL, [lock_ids, now, list(provider_ids)])
        rows = cursor.fetchall()
    if len(rows) != len(lock_ids) or (rows and rows[0][2] != len(provider_ids)):
        raise exceptions.AllocationWriteConflict("a resource provider was deleted")
    current = {provider_id: generation for provider_id, generation, _ in rows}
    for provider_id, (rp_uuid, generation) in expected.items():
        if current[provider_id] != generation:
            raise exceptions.ProviderGenerationMismatch(rp_uuid, generation,
                                                        current[provider_id])
    return {provider_id: current[provider_id] for provider_id in provider_ids}


def _bump_provider_generations(provider_ids, generations, now):
    """Compare-and-swap the locked providers' generation +1 (generations: what
    _lock_providers read). Returns {provider id: generation before the write}.
    Raises AllocationWriteConflict.
    """
    locked = [(provider_id, generations[provider_id]) for provider_id in provider_ids]
    if not locked:
        return {}
    condition = " OR ".join(["(id = %s AND generation = %s)"] * len(locked))
    params = [now]
    for provider_id, generation in locked:
        params += [provider_id, generation]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE resource_providers SET generation = generation + 1, updated_at = %s "
            f"WHERE {condition}", params)
        if cursor.rowcount != len(locked):
            raise exceptions.AllocationWriteConflict(
                "resource provider generation conflict")
    return dict(locked)


# The replaced allocations, returned by the DELETE itself (PostgreSQL, SQLite >= 3.35):
# the change log's "before" without another read. A scalar subquery per deleted row
# names the provider and class (primary-key lookups).
DELETE_RETURNING_SQL = (
    "DELETE FROM allocations WHERE consumer_id IN ({ids}) RETURNING consumer_id, "
    "(SELECT uuid FROM resource_providers WHERE id = allocations.provider_id), "
    "(SELECT name FROM resource_classes WHERE id = allocations.resource_class_id), used")


def _delete_allocations(consumer_ids):
    """Delete the allocations of `consumer_ids`; returns what they held.

    {consumer id: {provider uuid: {class name: used}}}, or None where the
    database cannot return deleted rows (then the log has no "before" allocations).
    """
    if not consumer_ids:
        return {}
    if not connection.features.can_return_columns_from_insert:
        Allocation.objects.filter(consumer_id__in=consumer_ids).delete()
        return None
    held = {}
    with connection.cursor() as cursor:
        cursor.execute(DELETE_RETURNING_SQL.format(ids=", ".join(["%s"] * len(consumer_ids))),
                       list(consumer_ids))
        for consumer_id, rp_uuid, rc_name, used in cursor.fetchall():
            held.setdefault(consumer_id, {}).setdefault(rp_uuid, {})[rc_name] = used
    return held


def _allocation_changes(plan, old_generations, held):
    """The change log entries of an allocation write (allocations_apply).

    One per consumer written: its generation before -> after, the allocations it
    held (when known) and those it holds now, its project, user and type as sent.
    One per provider whose allocations changed: its generation transition (the
    providers of the new allocations) and, per consumer of the write, what that
    consumer held there before (when known) and holds there now.
    """
    new = {}
    for r in plan.records:
        if r.amount > 0:
            new.setdefault(r.consumer_uuid, {}).setdefault(
                r.provider_uuid, {})[r.resource_class] = r.amount
    uuid_of = {row["id"]: consumer_uuid for consumer_uuid, row in plan.existing.items()}
    held_by_uuid = None if held is None else {
        uuid_of[consumer_id]: allocations for consumer_id, allocations in held.items()}

    changes = []
    for wanted in plan.consumers:
        current = plan.existing.get(wanted.consumer_uuid)
        if current is None and not wanted.allocations:
            continue  # nothing held, nothing written
        before = None
        if current is not None:
            before = {"generation": current["generation"]}
            if held_by_uuid is not None:
                before["allocations"] = held_by_uuid.get(wanted.consumer_uuid, {})
        after = None
        if wanted.allocations:
            after = {"generation": current["generation"] + 1 if current else 1,
                     "project": wanted.project_id, "user": wanted.user_id,
                     "allocations": new.get(wanted.consumer_uuid, {})}
            if wanted.consumer_type is not None:
                after["consumer_type"] = wanted.consumer_type
        changes.append(change_log.Change(
            change_log.CONSUMER, wanted.consumer_uuid, "allocations", before, after))

    providers = {}  # provider uuid -> (before, after)
    for r in plan.records:
        if r.provider_uuid not in providers:
            old = old_generations[r.provider_id]
            providers[r.provider_uuid] = (
                {"generation": old, **({} if held is None else {"consumers": {}})},
                {"generation": old + 1, "consumers": {}})
        resources = providers[r.provider_uuid][1]["consumers"].setdefault(r.consumer_uuid, {})
        if r.amount > 0:
            resources[r.resource_class] = r.amount
    for consumer_uuid, allocations in (held_by_uuid or {}).items():
        for rp_uuid, resources in allocations.items():
            before, after = providers.setdefault(rp_uuid, ({"consumers": {}}, {"consumers": {}}))
            before["consumers"][consumer_uuid] = resources
            after["consumers"].setdefault(consumer_uuid, {})
    changes += [change_log.Change(change_log.PROVIDER, rp_uuid, "allocations", before, after)
                for rp_uuid, (before, after) in providers.items()]
    return changes


# projects, users and consumer types: (model, column of the name)
_NAMED = ((Project, "external_id"), (User, "external_id"), (ConsumerType, "name"))


def _ensure_named(wanted, found):
    """[{name: id}] of projects, users and consumer types for the names `wanted` holds
    of each (three lists, in _NAMED's order): `found` (what allocations_prepare read)
    and the rows created for the names missing from it."""
    found = [dict(ids) for ids in found]
    for (model, column), values, ids in zip(_NAMED, wanted, found):
        missing = sorted({v for v in values if v not in ids})
        if missing:
            # ON CONFLICT DO NOTHING: a concurrent creator of the same name is fine.
            model.objects.bulk_create([model(**{column: v}) for v in missing],
                                      ignore_conflicts=True)
            ids.update(model.objects.filter(**{f"{column}__in": missing})
                       .values_list(column, "id"))
    return found


def _write_consumers(plan, now):
    """Create or update (generation compare-and-swap) every consumer of the plan.

    Returns {consumer uuid: id} for consumers that will hold allocations.
    """
    wanted = sorted(plan.consumers, key=lambda c: c.consumer_uuid)
    # A consumer that does not exist and gets no allocations is left alone:
    # a consumer exists iff it has allocations.
    wanted = [c for c in wanted if c.allocations or c.consumer_uuid in plan.existing]
    projects, users, types = _ensure_named((
        [c.project_id for c in wanted], [c.user_id for c in wanted],
        [c.consumer_type for c in wanted if c.consumer_type is not None]), plan.named)
    ids = {}
    for consumer in wanted:
        current = plan.existing.get(consumer.consumer_uuid)
        values = {"project_id": projects[consumer.project_id],
                  "user_id": users[consumer.user_id], "updated_at": now}
        if consumer.consumer_type is not None:
            values["consumer_type_id"] = types[consumer.consumer_type]
        if current is None:
            # No savepoint: a concurrent creator of the same consumer is a conflict,
            # and the caller rolls the whole transaction back (and may start over).
            try:
                created = Consumer.objects.create(
                    uuid=consumer.consumer_uuid, generation=1, created_at=now, **values)
            except IntegrityError:
                raise exceptions.AllocationWriteConflict(
                    f"consumer {consumer.consumer_uuid} was created concurrently")
            ids[consumer.consumer_uuid] = created.id
            continue
        changed = (Consumer.objects
                   .filter(id=current["id"], generation=current["generation"])
                   .update(generation=current["generation"] + 1, **values))
        if changed != 1:
            raise exceptions.AllocationWriteConflict(
                f"consumer {consumer.consumer_uuid} generation conflict")
        ids[consumer.consumer_uuid] = current["id"]
    return ids
