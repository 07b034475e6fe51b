"""Usage and capacity over time, reconstructed from the change log.

A scope is a set of providers that exist now (one provider, a tree, an aggregate's
members, or every provider) and optionally one resource class. Its history is
anchored on today's values (allocations.usage, as the provider and capacity pages
show them) and walked backwards through the scope's change-log entries, newest
first: each entry says what it changed (an inventory write its records before and
after, an allocation write what each consumer held on the provider before and
after), so undoing its difference gives the values before it. The latest point is
therefore always what the pages show now, however much of the log was pruned; the
series starts at the window's start, or at the oldest entry the log still keeps.

Providers deleted since are not in a scope: their deletion records no inventory,
so their capacity could not be walked back. Aggregate membership is today's.

Bounded work: three queries whatever the cloud's size (the scope's usage now, the
window's entries, the log's oldest entry), at most ENTRY_CAP entries read.
"""
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Min
from django.utils import timezone

from allocations.usage import capacity_by_class, inventory_usages
from providers.models import Aggregate, ChangeRecord, Inventory, ResourceClass, ResourceProvider
from providers.rules import INVENTORY_DEFAULTS, reported_capacity

WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
DEFAULT_WINDOW = "7d"
ENTRY_CAP = 5000   # entries read for one page: the newest of the window
# The provider entries that change usage or capacity (providers.services.inventories,
# allocations.services, the reshaper's merged entries).
USAGE_ACTIONS = ("inventories", "inventory_delete", "allocations", "reshape")


class ScopeNotFound(Exception):
    """The provider, aggregate or resource class a history page names does not exist."""


@dataclass(frozen=True)
class Scope:
    """What a history page covers. kind: provider, tree, aggregate or cloud."""

    kind: str
    key: str                  # the provider's or root's uuid, the aggregate's; "" for cloud
    title: str                # what the page calls it: a provider's or root's name
    providers: object         # a ResourceProvider QuerySet: the providers that exist now
    resource_class: str = ""  # narrows the history to one class

    @property
    def query(self):
        """The page's query parameters that name this scope."""
        params = {self.kind: self.key} if self.kind != "cloud" else {}
        if self.resource_class:
            params["resource_class"] = self.resource_class
        return params


def scope_of(*, provider="", tree="", aggregate="", resource_class=""):
    """The Scope a history page's parameters name (at most one of provider, tree,
    aggregate; a class alone is the whole cloud). Raises ScopeNotFound."""
    if resource_class and not ResourceClass.objects.filter(name=resource_class).exists():
        raise ScopeNotFound(f"No resource class {resource_class}.")
    if provider or tree:
        found = (ResourceProvider.objects.select_related("root")
                 .filter(uuid=provider or tree).first())
        if found is None:
            raise ScopeNotFound(f"No resource provider with uuid {provider or tree}.")
        if provider:
            return Scope("provider", found.uuid, found.name,
                         ResourceProvider.objects.filter(pk=found.pk), resource_class)
        root = found.root
        return Scope("tree", root.uuid, root.name,
                     ResourceProvider.objects.filter(root_id=root.pk), resource_class)
    if aggregate:
        found = Aggregate.objects.filter(uuid=aggregate).first()
        if found is None:
            raise ScopeNotFound(f"No aggregate {aggregate} (no provider is in it).")
        return Scope("aggregate", found.uuid, found.uuid,
                     ResourceProvider.objects.filter(provideraggregate__aggregate=found),
                     resource_class)
    return Scope("cloud", "", "the whole cloud", ResourceProvider.objects.all(), resource_class)


@dataclass(frozen=True)
class Entry:
    """One change-log entry of the scope, as read (the fields the pages use)."""

    id: int
    entity: str
    action: str
    before: dict | None
    after: dict | None
    actor: str
    project_id: str
    request_id: str
    created_at: object


@dataclass(frozen=True)
class Point:
    """From `at` on, `used` of `capacity` (after entry `entry_id`; None: the series' start)."""

    at: object
    used: int
    capacity: int
    entry_id: int | None = None


@dataclass
class Series:
    """One resource class's usage and capacity over the window, oldest point first."""

    resource_class: str
    points: list = field(default_factory=list)
    filled: list = field(default_factory=list)   # Points after which used reached capacity

    @property
    def now(self):
        return self.points[-1]

    @property
    def peak(self):
        return max(self.points, key=lambda point: point.used)


@dataclass
class History:
    scope: Scope
    start: object            # where the series start: the window's start or the log's
    end: object
    window_start: object
    oldest_kept: object      # the oldest entry the whole log keeps (None: it is empty)
    capped: bool             # more than ENTRY_CAP entries in the window: the oldest dropped
    unknown_before: bool     # an allocation write that did not record what it replaced
    entries: list            # [Entry] newest first: the timeline
    series: list             # [Series] by class name
    filled_entries: dict     # {entry id: [class names that reached capacity after it]}


def capacity_of(record):
    """What an inventory record (as the change log keeps it) adds to a capacity: its whole
    usable units, none when negative (as allocations.usage.capacity_by_class sums)."""
    if not record:
        return 0
    # The services log every field; a record written otherwise (an import) may leave
    # out those at their defaults.
    return max(reported_capacity(record.get("total", 0),
                                 record.get("reserved", INVENTORY_DEFAULTS["reserved"]),
                                 record.get("allocation_ratio",
                                            INVENTORY_DEFAULTS["allocation_ratio"])), 0)


def differences(entry):
    """{class: (used difference, capacity difference)} that `entry` made, and whether an
    allocation write's "before" was unknown (a database that cannot return deleted rows)."""
    before, after = entry.before or {}, entry.after or {}
    changes = defaultdict(lambda: [0, 0])
    old, new = before.get("inventories"), after.get("inventories")
    if old is not None or new is not None:
        old, new = old or {}, new or {}
        for rc in set(old) | set(new):
            changes[rc][1] += capacity_of(new.get(rc)) - capacity_of(old.get(rc))
    unknown = "consumers" in after and "consumers" not in before
    held, holds = before.get("consumers") or {}, after.get("consumers") or {}
    for consumer in set(held) | set(holds):
        was, now = held.get(consumer) or {}, holds.get(consumer) or {}
        for rc in set(was) | set(now):
            changes[rc][0] += now.get(rc, 0) - was.get(rc, 0)
    return {rc: tuple(change) for rc, change in changes.items() if change != [0, 0]}, unknown


def mentions(entry, resource_class):
    """Does `entry` change or name `resource_class` (its inventories or allocations)?"""
    for state in (entry.before, entry.after):
        if not isinstance(state, dict):
            continue
        if resource_class in (state.get("inventories") or {}):
            return True
        if any(resource_class in held for held in (state.get("consumers") or {}).values()):
            return True
    return False


def _entries(scope, since):
    """The scope's entries since `since`, newest first, at most ENTRY_CAP (one query), and
    whether the window holds more."""
    records = ChangeRecord.objects.filter(
        kind=ChangeRecord.KIND_PROVIDER, created_at__gte=since,
        entity__in=scope.providers.values("uuid"))
    if scope.resource_class:  # only usage entries name classes
        records = records.filter(action__in=USAGE_ACTIONS)
    rows = (records.order_by("-created_at", "-id")
            .values_list("id", "entity", "action", "before", "after", "actor", "project_id",
                         "request_id", "created_at")[:ENTRY_CAP + 1])
    entries = [Entry(*row) for row in rows]
    capped = len(entries) > ENTRY_CAP
    entries = entries[:ENTRY_CAP]
    if capped:  # the series start where the entries read do (before the class narrows them)
        since = entries[-1].created_at
    if scope.resource_class:
        entries = [entry for entry in entries if mentions(entry, scope.resource_class)]
    return entries, capped, since


def history(scope, *, window=DEFAULT_WINDOW, now=None):
    """The History of `scope` over the last `window` (a WINDOWS key)."""
    now = now or timezone.now()
    window_start = now - WINDOWS[window]
    inventories = Inventory.objects.filter(provider__in=scope.providers.values("id"))
    if scope.resource_class:
        inventories = inventories.filter(resource_class__name=scope.resource_class)
    current = {row.resource_class: (row.used, row.capacity)
               for row in capacity_by_class(inventory_usages(inventories))}
    entries, capped, start = _entries(scope, window_start)
    oldest_kept = ChangeRecord.objects.aggregate(oldest=Min("created_at"))["oldest"]
    if not capped and oldest_kept is not None and oldest_kept > window_start:
        start = oldest_kept  # before it, the log no longer knows

    # Backwards from now: each entry's values after it are the state before undoing it.
    state = {rc: list(values) for rc, values in current.items()}
    backwards = defaultdict(list)
    unknown_before = False
    for entry in entries:
        changes, unknown = differences(entry)
        unknown_before |= unknown
        for rc, (used, capacity) in changes.items():
            if scope.resource_class and rc != scope.resource_class:
                continue
            values = state.setdefault(rc, [0, 0])
            backwards[rc].append(Point(entry.created_at, values[0], values[1], entry.id))
            values[0] -= used
            values[1] -= capacity
    series = []
    for rc in sorted(state):
        points = [Point(start, *state[rc])] + backwards[rc][::-1]
        if all(point.used == 0 and point.capacity == 0 for point in points):
            continue
        series.append(Series(rc, points, _filled(points)))
    filled_entries = defaultdict(list)
    for line in series:
        for point in line.filled:
            filled_entries[point.entry_id].append(line.resource_class)
    return History(scope, start, now, window_start, oldest_kept, capped, unknown_before,
                   entries, series, dict(filled_entries))


def is_full(point):
    return point.capacity > 0 and point.used >= point.capacity


def _filled(points):
    """The points after which used reached the capacity: by a claim, or by an inventory
    lowered under what is held (who did it is the entry's actor either way)."""
    return [point for previous, point in zip(points, points[1:])
            if is_full(point) and not is_full(previous)]
