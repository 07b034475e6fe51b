"""Moving everything a consumer holds on one host (a provider tree) to another host.

plan_tree_move() is pure: it places each allocation the consumer holds in the source
tree on a provider of the target tree with inventory of the class, judged by
rules.move_refusal (the write's own tests), counting what the plan has already put
there. It prefers a provider the plan already uses (a VM's VCPU and MEMORY_MB on one
NUMA node rather than split), then the most free room, then the name; the largest
allocations are placed first. The write itself (allocations.edits.consumer_move_tree)
is one allocations_replace() checked against the generations the operator saw, so the
plan the page showed is the one written, or nothing is.

Allocations on providers outside the source tree (a sharing provider's DISK_GB) stay.
"""
from dataclasses import dataclass, field

from django.db.models import Count, F, FloatField, OuterRef, Subquery, Value
from django.db.models.functions import Cast, Floor, Least

from allocations import rules
from allocations.models import Allocation
from providers.models import Inventory, ResourceProvider
from allocations.usage import with_usage
from providers.querysets import capacity_expression
from providers.rules import reported_capacity


@dataclass(frozen=True)
class Held:
    """One allocation the consumer holds in the source tree."""

    provider_uuid: str
    provider_name: str
    resource_class: str
    amount: int


@dataclass(frozen=True)
class TreeInventory:
    """One inventory of a target tree, with its usage now."""

    provider_uuid: str
    provider_name: str
    provider_generation: int
    root_id: int
    resource_class: str
    used: int
    limits: rules.InventoryLimits

    @property
    def free(self):
        return max(reported_capacity(self.limits.total, self.limits.reserved,
                                     self.limits.allocation_ratio) - self.used, 0)


@dataclass
class TreePlan:
    """Where each held allocation would go: steps [(Held, TreeInventory)], or the
    reasons it does not fit."""

    steps: list = field(default_factory=list)
    reasons: list = field(default_factory=list)

    @property
    def fits(self):
        return not self.reasons

    def allocations(self):
        """{provider uuid: {class: amount}} the plan puts in the target tree."""
        placed = {}
        for held, target in self.steps:
            resources = placed.setdefault(target.provider_uuid, {})
            resources[held.resource_class] = resources.get(held.resource_class, 0) + held.amount
        return placed


def plan_tree_move(held, inventories):
    """The TreePlan of moving `held` ([Held]) onto `inventories` ([TreeInventory] of the
    target tree). Pure."""
    plan = TreePlan()
    added = {}      # (provider uuid, class) -> amount the plan puts there
    used_providers = []
    for item in sorted(held, key=lambda h: (-h.amount, h.resource_class, h.provider_name)):
        options = [inv for inv in inventories if inv.resource_class == item.resource_class]
        if not options:
            plan.reasons.append(f"no {item.resource_class} inventory")
            continue
        best, why = None, None
        for inv in sorted(options, key=lambda i: (i.provider_uuid not in used_providers,
                                                  -(i.free - added.get((i.provider_uuid,
                                                                        i.resource_class), 0)),
                                                  i.provider_name)):
            already = added.get((inv.provider_uuid, inv.resource_class), 0)
            refusal = rules.move_refusal(item.amount, already, inv.used + already, inv.limits)
            if refusal is None:
                best = inv
                break
            why = why or f"{item.resource_class}={item.amount:,} on {inv.provider_name} " \
                         f"{refusal[1]}"
        if best is None:
            plan.reasons.append(why)
            continue
        key = (best.provider_uuid, best.resource_class)
        added[key] = added.get(key, 0) + item.amount
        if best.provider_uuid not in used_providers:
            used_providers.append(best.provider_uuid)
        plan.steps.append((item, best))
    return plan


def held_in_tree(*, consumer_id, root_id):
    """[Held] of the consumer's allocations on providers of the tree `root_id`; one query."""
    return [Held(*row) for row in (
        Allocation.objects.filter(consumer_id=consumer_id, provider__root_id=root_id)
        .order_by("provider__name", "resource_class__name")
        .values_list("provider__uuid", "provider__name", "resource_class__name", "used"))]


INVENTORY_COLUMNS = ("provider__uuid", "provider__name", "provider__generation",
                     "provider__root_id", "resource_class__name", "used", "total", "reserved",
                     "min_unit", "max_unit", "step_size", "allocation_ratio")


def tree_inventories(*, root_ids, classes):
    """{root id: [TreeInventory]} of the classes `classes` in the trees `root_ids`; one
    query however many trees."""
    trees = {}
    rows = (with_usage(Inventory.objects.filter(provider__root_id__in=list(root_ids),
                                                resource_class__name__in=list(classes)))
            .order_by("provider__name").values_list(*INVENTORY_COLUMNS))
    for (uuid, name, generation, root_id, rc, used, total, reserved, min_unit, max_unit,
         step, ratio) in rows:
        trees.setdefault(root_id, []).append(TreeInventory(
            uuid, name, generation, root_id, rc, used,
            rules.InventoryLimits(total, reserved, min_unit, max_unit, step, ratio)))
    return trees


def target_hosts(*, classes, exclude_root_id, query="", amounts=None, narrow=None):
    """Roots (a queryset) whose trees have inventory of every class of `classes`, but
    the source tree, whose name contains `query`; `narrow`: a Q on the roots, applied too.

    Ordered as the single-allocation picker orders its targets (most free room first,
    then name): with `amounts` ({class: amount held}), by the *room* of each tree, the
    number of times the amount held of a class would fit on the tree's provider with the
    most whole units of it free (floor(capacity) - used), the least of the classes; so
    with one class held the order is that of the most free room. Without `amounts`, by
    name. One query (a subquery per class)."""
    # one grouped subquery, not one a class: MariaDB flattens each IN into a semi-join
    # of three tables, and the plans of many grow slow to find
    with_every_class = (Inventory.objects.filter(resource_class__name__in=classes)
                        .values("provider__root_id")
                        .annotate(found=Count("resource_class", distinct=True))
                        .filter(found=len(classes)).values("provider__root_id"))
    roots = (ResourceProvider.objects.filter(parent__isnull=True).exclude(id=exclude_root_id)
             .filter(id__in=with_every_class))
    if query:
        roots = roots.filter(name__icontains=query)
    if narrow is not None:
        roots = roots.filter(narrow)
    if not amounts:
        return roots.order_by("name")
    rooms = []
    for rc, amount in sorted(amounts.items()):
        best = (with_usage(Inventory.objects.filter(resource_class__name=rc,
                                                    provider__root_id=OuterRef("pk")))
                .annotate(free=Floor(capacity_expression()) - F("used"))
                .order_by("-free").values("free")[:1])
        rooms.append(Cast(Subquery(best), FloatField()) / Value(float(max(amount, 1))))
    room = rooms[0] if len(rooms) == 1 else Least(*rooms)
    return roots.annotate(room=room).order_by(F("room").desc(nulls_last=True), "name")
