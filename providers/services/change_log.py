"""The change log: every service write records who changed what, before -> after.

Each write service calls changes_record() (or change_record()) once, inside its
own transaction, with what it already read and what it wrote: one INSERT (all of
a write's entries in one statement), no extra reads, and a write that rolls back
(a refusal, a lost generation race, a dry run) leaves no entry. The actor and
request id come from foundation.actor, set once per entry point (API, UI,
admin, command), so no caller passes them.

Retention: entries older than [placement] change_log_retention_days are deleted
by change_log_prune(), which `manage.py prune_change_log` runs, and which each
process also runs at most once an hour after a write has committed (never inside
the write's transaction).

The reshaper writes inventories and allocations through several services;
inside change_batch("reshape") their entries are merged into one per entity.
"""
import contextvars
import logging
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from foundation import db_faults
from foundation.actor import current_actor
from providers.models import ChangeRecord

LOG = logging.getLogger(__name__)

PRUNE_INTERVAL_SECONDS = 3600
# One entry of a write (created_at: the time to the microsecond, taken once per write).
MARKER_SQL = ("SELECT 1 FROM change_records WHERE created_at = %s AND request_id = %s "
              "AND kind = %s AND entity = %s")

PROVIDER = ChangeRecord.KIND_PROVIDER
CONSUMER = ChangeRecord.KIND_CONSUMER
RESOURCE_CLASS = ChangeRecord.KIND_RESOURCE_CLASS
TRAIT = ChangeRecord.KIND_TRAIT
DATABASE = ChangeRecord.KIND_DATABASE


@dataclass
class Change:
    """One entity's change. before / after: JSON-able dicts, None when the entity
    did not exist before (a create) / does not exist after (a delete)."""

    kind: str
    entity: str
    action: str
    before: dict | None = None
    after: dict | None = None


_batch = contextvars.ContextVar("placement_change_batch", default=None)
_prune_lock = threading.Lock()
_last_prune = None  # time.monotonic() of this process's last scheduled prune


def change_record(*, kind, entity, action, before=None, after=None):
    """Record one change (see changes_record)."""
    changes_record([Change(kind, entity, action, before, after)])


def changes_record(changes, using=DEFAULT_DB_ALIAS):
    """Insert `changes` (a list of Change) into the change log, in one statement.

    Must be called inside the transaction of the write it describes (on the
    database `using`). Inside change_batch() the changes are kept for the
    batch's single insert instead.
    """
    if not changes:
        return
    batch = _batch.get()
    if batch is not None:
        batch.extend(changes)
        return
    actor = current_actor()
    now = timezone.now()
    ChangeRecord.objects.using(using).bulk_create([
        ChangeRecord(kind=change.kind, entity=change.entity, action=change.action,
                     before=change.before, after=change.after, actor=actor.name,
                     project_id=actor.project_id, request_id=actor.request_id,
                     created_at=now)
        for change in changes])
    # The entry is there iff the write committed: what a COMMIT that lost its
    # connection is looked up by (foundation/db_faults.py).
    db_faults.commit_marker(using, MARKER_SQL, [
        connections[using].ops.adapt_datetimefield_value(now), actor.request_id,
        changes[0].kind, changes[0].entity])
    if using == DEFAULT_DB_ALIAS:
        _schedule_prune()


@contextmanager
def change_batch(action):
    """Merge the changes recorded inside the block into one entry per entity.

    Each entity's entry has the given `action`, the `before` of its first change
    (keys first seen later are added) and the `after` of its last one (merged
    over the earlier ones), and is inserted, all in one statement, when the block
    ends without an exception. Must run inside the write's transaction.
    """
    if _batch.get() is not None:  # already collecting: the outer batch inserts
        yield
        return
    collected = []
    token = _batch.set(collected)
    try:
        yield
    finally:
        _batch.reset(token)
    changes_record(_merged(collected, action))


def _merged(changes, action):
    merged = {}
    for change in changes:
        key = (change.kind, change.entity)
        entry = merged.get(key)
        if entry is None:
            merged[key] = Change(change.kind, change.entity, action,
                                 _copy(change.before), _copy(change.after))
            continue
        if isinstance(entry.before, dict) and isinstance(change.before, dict):
            for name, value in change.before.items():
                entry.before.setdefault(name, value)
        if change.after is None:
            entry.after = None
        elif isinstance(entry.after, dict):
            entry.after.update(change.after)
        else:
            entry.after = dict(change.after)
    return list(merged.values())


def _copy(value):
    return dict(value) if isinstance(value, dict) else value


def change_log_prune(*, days=None, now=None):
    """Delete the entries older than `days` (default: the retention option).

    days 0 keeps everything. Returns the number of entries deleted.
    """
    days = settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS if days is None else days
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = ChangeRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def _schedule_prune():
    """At most once an hour per process, prune after the current transaction commits."""
    global _last_prune
    if settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS <= 0:
        return
    now = time.monotonic()
    with _prune_lock:
        if _last_prune is not None and now - _last_prune < PRUNE_INTERVAL_SECONDS:
            return
        _last_prune = now
    transaction.on_commit(_prune_quietly)


def _prune_quietly():
    try:
        deleted = change_log_prune()
    except Exception:  # the write it follows has committed: never fail it
        LOG.exception("pruning the change log failed")
        return
    if deleted:
        LOG.info("change log: %d entries older than %d days deleted", deleted,
                 settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS)
