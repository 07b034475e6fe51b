"""Reads for the whole-cloud capacity page: every inventory with its usage.

One query fetches every inventory row with its provider and the sum of the
allocations against it (providers.querysets.with_usage); the per-class totals
and the heatmap cells are computed from those rows in Python with the one
capacity formula, providers.rules.capacity() (and reported_capacity() where a
whole number is shown), so the page agrees with the API and with the
over-capacity health check (its SQL twin).

Imports go providers <- allocations: usage is read through the reverse relation
(querysets.usage_subquery), never the Allocation model.
"""
from dataclasses import dataclass, field
from functools import cached_property

from providers import querysets, rules
from providers.models import Inventory

# Heatmap colour steps: a cell's usage percentage falls in one of HEAT_STEPS
# buckets of equal width; usage beyond capacity has its own colour.
HEAT_STEPS = 10


@dataclass(frozen=True)
class InventoryUsage:
    """One inventory and what is allocated against it."""

    provider_id: int
    provider_uuid: str
    provider_name: str
    resource_class: str
    total: int
    reserved: int
    allocation_ratio: float
    used: int
    provider_generation: int = 0

    @cached_property
    def capacity(self):
        """(total - reserved) * allocation_ratio, untruncated (rules.capacity)."""
        return rules.capacity(self.total, self.reserved, self.allocation_ratio)

    @cached_property
    def usable(self):
        """The whole units consumers may use (rules.reported_capacity)."""
        return rules.reported_capacity(self.total, self.reserved, self.allocation_ratio)

    @property
    def over_capacity(self):
        """Something is allocated, more than the capacity allows (after an inventory was
        lowered); as querysets.over_capacity() asks the database."""
        return self.used > 0 and self.used > self.capacity

    @property
    def free(self):
        """Units that can still be allocated (never negative)."""
        return max(self.usable - self.used, 0)

    @property
    def over_committed(self):
        """Units allocated beyond the physical amount (total - reserved): what an
        allocation_ratio above 1 lets consumers hold."""
        physical = rules.capacity(self.total, self.reserved, 1)
        return max(self.used - max(physical, 0), 0)

    @property
    def percent(self):
        """used / usable (the whole units every page shows as capacity) in percent, as
        usage bars compute it (console.providers.tree_layout.usage_bar), so that one usage reads
        the same everywhere; None when there is no capacity."""
        if self.usable <= 0:
            return None
        return self.used * 100.0 / self.usable


USAGE_COLUMNS = ("provider_id", "provider__uuid", "provider__name", "resource_class__name",
                 "total", "reserved", "allocation_ratio", "used", "provider__generation")


def inventory_usages(inventories=None):
    """[InventoryUsage] of `inventories` (an Inventory QuerySet, default all), by
    provider name then class name (one query)."""
    inventories = Inventory.objects.all() if inventories is None else inventories
    rows = (querysets.with_usage(inventories)
            .order_by("provider__name", "resource_class__name")
            .values_list(*USAGE_COLUMNS))
    return [InventoryUsage(*row) for row in rows]


@dataclass
class ClassCapacity:
    """The totals of one resource class over the whole cloud."""

    resource_class: str
    providers: int = 0
    total: int = 0
    reserved: int = 0
    capacity: int = 0           # sum of each provider's usable (whole) capacity, if any
    used: int = 0
    free: int = 0
    over_committed: int = 0     # units held beyond the physical amount
    over_committed_providers: int = 0
    over_capacity_providers: int = 0


def capacity_by_class(usages):
    """[ClassCapacity] by class name, summed over `usages` (InventoryUsage rows)."""
    classes = {}
    for row in usages:
        totals = classes.get(row.resource_class)
        if totals is None:
            totals = classes[row.resource_class] = ClassCapacity(row.resource_class)
        totals.providers += 1
        totals.total += row.total
        totals.reserved += row.reserved
        # An inventory the reshaper stored with reserved > total has a negative capacity;
        # it offers nothing, and takes nothing from the other providers' capacity.
        totals.capacity += max(row.usable, 0)
        totals.used += row.used
        totals.free += row.free
        totals.over_committed += row.over_committed
        totals.over_committed_providers += row.over_committed > 0
        totals.over_capacity_providers += row.over_capacity
    return [classes[name] for name in sorted(classes)]


@dataclass
class HeatCell:
    """One provider on the heatmap: its usage of one class, or its most used class."""

    uuid: str
    name: str
    percent: float = 0.0        # the highest used / capacity of the cell's classes
    over: bool = False          # some class is used beyond its capacity
    rows: list = field(default_factory=list)    # [InventoryUsage] by class name

    @property
    def step(self):
        """The colour step: 0..HEAT_STEPS, or "over" beyond capacity."""
        if self.over:
            return "over"
        return min(int(self.percent * HEAT_STEPS // 100), HEAT_STEPS)

    @property
    def top(self):
        """The InventoryUsage that decides the cell's step: a class over capacity
        first, then the most used one."""
        return max(self.rows, key=lambda row: (row.over_capacity, row.percent or 0.0))


def heat_cells(usages, resource_class=None):
    """[HeatCell] of the providers with inventory (of `resource_class`, when given), in
    the order of `usages`. Without a class a cell shows the provider's most used class."""
    cells = {}
    for row in usages:
        if resource_class is not None and row.resource_class != resource_class:
            continue
        cell = cells.get(row.provider_id)
        if cell is None:
            cell = cells[row.provider_id] = HeatCell(row.provider_uuid, row.provider_name)
        cell.rows.append(row)
        cell.over = cell.over or row.over_capacity
        # No capacity: over capacity when anything is used (flagged above), else unused.
        cell.percent = max(cell.percent, row.percent or 0.0)
    return list(cells.values())


@dataclass(frozen=True)
class BelowUsage:
    """A class whose new inventory record leaves less capacity than is allocated now.

    Placement accepts such a record (the provider is then over capacity and takes no
    new allocations of the class); the UI and the admin ask before they write it.
    """

    resource_class: str
    capacity: int       # of the new record, in whole units (rules.reported_capacity)
    used: int
    holders: tuple      # ((consumer uuid, used), ...) by consumer uuid


def inventories_below_usage(provider, inventories):
    """[BelowUsage] by class name: the classes of `inventories` ({name: record; blank
    fields take the API's defaults}) whose capacity would be below what is allocated
    against `provider` now. One query."""
    holders = {}
    for consumer, rc, used in (provider.allocations
                               .filter(resource_class__name__in=list(inventories))
                               .order_by("resource_class__name", "consumer__uuid")
                               .values_list("consumer__uuid", "resource_class__name", "used")):
        holders.setdefault(rc, []).append((consumer, used))
    below = []
    for rc, held in holders.items():
        record = rules.with_defaults(dict(inventories[rc]))
        used = sum(amount for _, amount in held)
        if used > rules.capacity(record["total"], record["reserved"], record["allocation_ratio"]):
            below.append(BelowUsage(rc, rules.reported_capacity(
                record["total"], record["reserved"], record["allocation_ratio"]), used, tuple(held)))
    return below


def over_capacity_usages():
    """The inventories used beyond their capacity, by provider name then class, as a
    lazy queryset of USAGE_COLUMNS rows (to page; InventoryUsage(*row) each): the status
    page lists every one of them, named and linked."""
    return (querysets.over_capacity(Inventory.objects)
            .order_by("provider__name", "resource_class__name").values_list(*USAGE_COLUMNS))
