"""Usage: what is allocated against each inventory, and the capacity left.

The one place that reads both tables, inventories (providers) and allocations: the
allocations app stands on providers and may see both. The query fragments build
queries and decide nothing (each filter only narrows); the formula is
providers.rules.capacity(), and capacity_expression() its SQL twin
(tests/providers/test_capacity_twins.py holds them equal).

Providers' own rules ask their usage questions through providers.usage, which this
module answers (allocations/apps.py installs it): an inventory in use, a provider or
class in use, where an amount fits (GET /resource_providers?resources=).

Signatures
----------
usage_subquery(rc_id, provider_ref)    SUM(used) of one class on the provider
                                       referenced by ``provider_ref`` (OuterRef)
with_usage(inventories)                Inventory rows annotated with ``used``
over_capacity(inventories)             Inventory rows whose usage exceeds capacity
room_q(amount, units=, used=)          Q on Inventory rows: `amount` more fits
capacity_provider_ids(rc_id, amount)   ids of providers where `amount` of the class fits
with_capacity(qs, amounts)             providers where every amount fits
over_capacity_provider_ids()           providers using more of a class than its capacity
write_set_usage(provider_ids, class_ids, consumer_ids)
                                       an allocation write's inventories and usage,
                                       one statement (the claim's capacity check)
"""
from dataclasses import dataclass
from functools import cached_property

from django.db import connection
from django.db.models import (
    F,
    FloatField,
    Func,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Mod
from django.db.models.lookups import Exact, LessThanOrEqual

from allocations import rules as allocation_rules
from allocations.models import Allocation
from providers import rules
from providers.models import Inventory
from providers.querysets import capacity_expression


# --- query fragments ---------------------------------------------------------------------

def usage_subquery(rc_id, provider_ref=None):
    """SUM(allocations.used) for class `rc_id` on the provider `provider_ref` (0 if none).

    `provider_ref` defaults to OuterRef("provider_id") (for use on Inventory rows).

    SQL shape: COALESCE((SELECT SUM(used) FROM allocations WHERE provider_id = ...
    AND resource_class_id = ...), 0). A plain aggregate, one row whatever matches:
    Django's usual form (GROUP BY provider_id ... LIMIT 1) let PostgreSQL's planner
    count on the LIMIT to stop a sequential scan of the allocations early, and scan
    them whole once per inventory row (GET /resource_providers?resources=: 124 ms
    instead of 10 at 1,000 providers, after a run of claims).
    """
    provider_ref = provider_ref if provider_ref is not None else OuterRef("provider_id")
    used = (Allocation.objects
            .filter(provider_id=provider_ref, resource_class_id=rc_id)
            .order_by()
            # SUM as a plain function: Django adds no GROUP BY for it
            .annotate(total_used=Func(F("used"), function="SUM"))
            .values("total_used"))
    return Coalesce(Subquery(used, output_field=IntegerField()), Value(0))


def with_usage(inventories):
    """Inventory rows annotated with `used`: SUM(used) of the allocations of the row's
    class on the row's provider (0 when there are none)."""
    return inventories.annotate(used=usage_subquery(OuterRef("resource_class_id")))


def over_capacity(inventories):
    """Inventory rows (annotated with `used`) whose allocations exceed their capacity:
    used > (total - reserved) * allocation_ratio, with something allocated.

    SQL shape:
        SELECT inventories.*, <usage_subquery> AS used FROM inventories
        WHERE used > 0 AND used > (total - reserved) * allocation_ratio
    """
    return (with_usage(inventories)
            .annotate(_capacity=capacity_expression())
            .filter(used__gt=0)
            .filter(used__gt=F("_capacity")))


def room_q(amount, *, units=None, used=None):
    """Q on Inventory rows: `amount` (at least 1) more of the row's class fits there
    now, by the write's rules (allocations.rules.move_refusal, which
    tests/providers/test_capacity_twins.py holds equal to this): `units` (what the
    consumer will then hold there: an int or an expression per row; default `amount`)
    keeps min_unit <= units <= max_unit and units % step_size == 0, and
    used + amount <= (total - reserved) * allocation_ratio. `used`: the row's usage,
    default F("used") (with_usage).
    """
    units = Value(amount) if units is None else units
    within_units = (Q(min_unit__lte=units, max_unit__gte=units)
                    # step_size = 1 says nothing MOD() does not, but the planner estimates
                    # it from the column's statistics (nearly every row), where it puts any
                    # expression = 0 at 0.5 % of the rows and then nests loops over them
                    & (Q(step_size=1)
                       | Exact(Mod(units, F("step_size"), output_field=IntegerField()), 0)))
    used = F("used") if used is None else used
    return within_units & Q(LessThanOrEqual(Cast(used + Value(amount), FloatField()),
                                            capacity_expression()))


def capacity_provider_ids(rc_id, amount):
    """Ids of providers to which `amount` of class `rc_id` fits now (see module doc).

    SQL shape:
        SELECT provider_id FROM inventories
        WHERE resource_class_id = %s AND min_unit <= %s AND max_unit >= %s
          AND (step_size = 1 OR MOD(%s, step_size) = 0)
          AND COALESCE((SELECT SUM(used) FROM allocations a
                        WHERE a.provider_id = inventories.provider_id
                          AND a.resource_class_id = %s), 0) + %s
              <= (total - reserved) * allocation_ratio
    """
    return (Inventory.objects
            .filter(room_q(amount, used=usage_subquery(rc_id)), resource_class_id=rc_id)
            .values_list("provider_id", flat=True))


def over_capacity_provider_ids():
    """Ids of providers where the usage of some class exceeds its capacity
    (over_capacity). Placement lets this happen (an inventory lowered below its usage,
    the reshaper); such a provider takes no new allocation of the class."""
    return over_capacity(Inventory.objects).values_list("provider_id", flat=True)


def with_capacity(qs, amounts):
    """Narrow `qs` to providers where every {rc_id: amount} fits (each on its own)."""
    for rc_id, amount in amounts.items():
        qs = qs.filter(id__in=capacity_provider_ids(rc_id, amount))
    return qs



# --- the questions providers asks (providers.usage) -------------------------------------

def classes_in_use(provider, rc_ids):
    """Names of the classes among `rc_ids` that have allocations on `provider`, in class
    id order (standard classes first, in their canonical order), as Placement lists
    them in its in-use message."""
    if not rc_ids:
        return []
    rows = (Allocation.objects.filter(provider=provider, resource_class_id__in=list(rc_ids))
            .values_list("resource_class_id", "resource_class__name").distinct())
    return [name for _, name in sorted(set(rows))]


def provider_in_use(provider):
    """Does some consumer hold an allocation against `provider`?"""
    return Allocation.objects.filter(provider=provider).exists()


def class_in_use(resource_class, provider=None):
    """Does some consumer hold `resource_class` (on `provider`, when given)?"""
    held = Allocation.objects.filter(resource_class=resource_class)
    return (held if provider is None else held.filter(provider=provider)).exists()


def consumers_of_class(resource_class):
    """How many consumers hold some of `resource_class`."""
    return (Allocation.objects.filter(resource_class=resource_class)
            .values("consumer_id").distinct().count())


def used_per_class():
    """{resource class id: units allocated} over the whole cloud (one grouped query)."""
    return dict(Allocation.objects.order_by().values("resource_class_id")
                .annotate(used=Sum("used")).values_list("resource_class_id", "used"))


def used_per_provider_class(providers):
    """{(provider id, resource class id): units allocated} on the providers of the
    ResourceProvider QuerySet `providers` (one grouped query)."""
    rows = (Allocation.objects.filter(provider__in=providers.values("id")).order_by()
            .values("provider_id", "resource_class_id").annotate(used=Sum("used")))
    return {(row["provider_id"], row["resource_class_id"]): row["used"] for row in rows}


# --- each inventory with its usage ------------------------------------------------------

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
        lowered); as over_capacity() asks the database."""
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
    rows = (with_usage(inventories)
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
    for consumer, rc, used in (Allocation.objects
                               .filter(provider=provider,
                                       resource_class__name__in=list(inventories))
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
    return (over_capacity(Inventory.objects)
            .order_by("provider__name", "resource_class__name").values_list(*USAGE_COLUMNS))


# The touched inventories with their usage (all of it, and the writing consumers' own),
# read in one statement once the providers are locked: each sum is an index range of
# alloc_rp_rc_idx (provider, class, used).
INVENTORY_USAGE_SQL = (
    "SELECT i.provider_id, i.resource_class_id, i.total, i.reserved, i.min_unit, "
    "i.max_unit, i.step_size, i.allocation_ratio, "
    "(SELECT SUM(a.used) FROM allocations a WHERE a.provider_id = i.provider_id "
    "AND a.resource_class_id = i.resource_class_id), {own} "
    "FROM inventories i WHERE i.provider_id IN ({providers}) "
    "AND i.resource_class_id IN ({classes})")
OWN_USAGE_SQL = (
    "(SELECT SUM(a.used) FROM allocations a WHERE a.provider_id = i.provider_id "
    "AND a.resource_class_id = i.resource_class_id AND a.consumer_id IN ({consumers}))")


def write_set_usage(provider_ids, class_ids, consumer_ids):
    """An allocation write's capacity check (allocations.services, once the providers
    are locked): ({(provider id, class id): InventoryLimits}, {key: used}, {key: used by
    consumer_ids}) of the inventories of those providers and classes, in one statement."""
    limits, current_usage, own_usage = {}, {}, {}
    if not provider_ids or not class_ids:
        return limits, current_usage, own_usage
    own = (OWN_USAGE_SQL.format(consumers=", ".join(["%s"] * len(consumer_ids)))
           if consumer_ids else "NULL")
    sql = INVENTORY_USAGE_SQL.format(own=own,
                                     providers=", ".join(["%s"] * len(provider_ids)),
                                     classes=", ".join(["%s"] * len(class_ids)))
    with connection.cursor() as cursor:
        cursor.execute(sql, list(consumer_ids) + list(provider_ids) + list(class_ids))
        rows = cursor.fetchall()
    for (provider_id, class_id, total, reserved, min_unit, max_unit, step_size, ratio,
         used, own_used) in rows:
        key = (provider_id, class_id)
        limits[key] = allocation_rules.InventoryLimits(total, reserved, min_unit, max_unit,
                                            step_size, ratio)
        current_usage[key] = int(used or 0)
        own_usage[key] = int(own_used or 0)
    return limits, current_usage, own_usage
