"""Reads behind the operator UI's provider trees and provider list export.

Every function is a fixed number of queries whatever the number of providers:
it takes a ResourceProvider QuerySet (used as a subquery, never a list of ids
in the SQL) and answers for all of its providers at once. Usage is
allocations.usage's.
"""
import math
from collections import defaultdict

from django.db.models import F, Sum

from allocations.models import Allocation
from allocations.usage import used_per_provider_class
from providers.models import Inventory, ProviderAggregate, ProviderTrait, ResourceProvider
from providers.querysets import capacity_expression
from providers.rules import reported_capacity

# What the tree page needs of each provider (MPTT fields give the tree order).
NODE_FIELDS = ("id", "uuid", "name", "generation", "parent_id", "root_id", "level")


def tree_nodes(providers):
    """Providers as dicts (NODE_FIELDS), trees one after the other in tree order (1 query)."""
    return list(providers.order_by("tree_id", "lft").values(*NODE_FIELDS))


def usage_by_class(providers):
    """{provider id: [(class name, used, capacity), ...]} sorted by class, one entry per
    inventory; capacity as Placement reports it (truncated). 2 queries."""
    used = used_per_provider_class(providers)
    rows = defaultdict(list)
    for provider_id, rc_id, rc_name, total, reserved, ratio in (
            Inventory.objects.filter(provider__in=providers)
            .values_list("provider_id", "resource_class_id", "resource_class__name",
                         "total", "reserved", "allocation_ratio")
            .order_by("resource_class__name")):
        rows[provider_id].append((rc_name, used.get((provider_id, rc_id), 0),
                                  reported_capacity(total, reserved, ratio)))
    return rows


def tags(providers):
    """({provider id: [trait names]}, {provider id: [aggregate uuids]}), sorted. 2 queries."""
    traits, aggregates = defaultdict(list), defaultdict(list)
    for provider_id, name in (ProviderTrait.objects.filter(provider__in=providers)
                              .values_list("provider_id", "trait__name").order_by("trait__name")):
        traits[provider_id].append(name)
    for provider_id, uuid in (ProviderAggregate.objects.filter(provider__in=providers)
                              .values_list("provider_id", "aggregate__uuid")
                              .order_by("aggregate__uuid")):
        aggregates[provider_id].append(uuid)
    return traits, aggregates


def usage_ratios(providers, group_by="id", resource_class=None):
    """{group: highest used/capacity over the resource classes}, summed per group first.

    group_by "id": each provider on its own; "root_id": each whole tree (the
    tree's subtree totals). resource_class: only that class's ratio. A group
    with usage but no capacity ranks as infinitely full, one with neither as 0.
    2 queries; for ordering only (capacities are summed untruncated).
    """
    inventories = Inventory.objects.filter(provider__in=providers)
    usage = Allocation.objects.filter(provider__in=providers.values("id"))
    if resource_class:
        inventories = inventories.filter(resource_class__name=resource_class)
        usage = usage.filter(resource_class__name=resource_class)
    capacity = {(row["group"], row["resource_class_id"]): row["capacity"]
                for row in (inventories.order_by()
                            .values("resource_class_id", group=F(f"provider__{group_by}"))
                            .annotate(capacity=Sum(capacity_expression())))}
    ratios = defaultdict(float)
    for row in (usage.order_by()
                .values(group=F(f"provider__{group_by}"), rc_id=F("resource_class_id"))
                .annotate(used=Sum("used"))):
        cap = capacity.get((row["group"], row["rc_id"])) or 0
        ratio = row["used"] / cap if cap > 0 else (math.inf if row["used"] else 0.0)
        ratios[row["group"]] = max(ratios[row["group"]], ratio)
    return ratios


def export_rows(providers):
    """Providers with their parent and root uuids, by name (1 query)."""
    return list(providers.annotate(parent_uuid=F("parent__uuid"), root_uuid=F("root__uuid"))
                .order_by("name").values("id", "uuid", "name", "generation",
                                         "parent_uuid", "root_uuid"))


def roots_of(providers):
    """The roots of the trees `providers` belong to (a QuerySet)."""
    return ResourceProvider.objects.filter(parent__isnull=True,
                                           id__in=providers.values("root_id"))
