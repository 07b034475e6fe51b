"""Reads for the bulk edit of allocation ratios and reserved amounts (/ui/bulk/).

bulk_matching() selects the providers a change may apply to (usage_rows() pages them);
bulk_preview()
computes what the change would do to each chosen one, with the same rules the
service applies (providers.rules: field ranges, the capacity rule of the latest
microversion, the capacity formula), without writing anything. Each preview
row carries the provider generation it was computed with: the apply step
writes with it, so a provider changed in between is a conflict, not
overwritten. A fixed number of queries each.
"""
import dataclasses

from django.db.models import Q

from foundation.domain_errors import DomainError
from foundation.uuids import canonical_uuid_or_none
from allocations.models import Allocation
from allocations.usage import USAGE_COLUMNS, InventoryUsage, inventory_usages, with_usage
from providers import rules
from providers.models import Inventory, ProviderAggregate, ProviderTrait, ResourceProvider

# The inventory fields a bulk edit may change.
BULK_FIELDS = ("allocation_ratio", "reserved")


def tree_root_id(name_or_uuid):
    """The root id of the tree of the provider with that uuid or name, or None."""
    canonical = canonical_uuid_or_none(name_or_uuid)
    lookup = Q(uuid=canonical) if canonical else Q(name=name_or_uuid)
    return ResourceProvider.objects.filter(lookup).values_list("root_id", flat=True).first()


def matching_hosts(*, name_contains="", aggregate=None, trait=None):
    """The providers the host filters select (a lazy queryset), or None when none is
    given: a part of the name (any case), membership of an aggregate (uuid), a trait."""
    if not (name_contains or aggregate or trait):
        return None
    hosts = ResourceProvider.objects.all()
    if name_contains:
        hosts = hosts.filter(name__icontains=name_contains)
    if aggregate:
        hosts = hosts.filter(id__in=ProviderAggregate.objects.filter(
            aggregate__uuid=aggregate).values("provider_id"))
    if trait:
        hosts = hosts.filter(id__in=ProviderTrait.objects.filter(
            trait__name=trait).values("provider_id"))
    return hosts


def bulk_matching(*, resource_class, name_contains="", aggregate=None, trait=None,
                  root_id=None, provider_uuids=None):
    """The `resource_class` inventories (a lazy queryset) in the trees of the providers
    the host filters select (matching_hosts): a host's VCPU may sit on its NUMA nodes,
    and its aggregates and traits on the host alone. Narrowed to the tree of `root_id`
    and to a list of uuids when given."""
    inventories = Inventory.objects.filter(resource_class__name=resource_class)
    hosts = matching_hosts(name_contains=name_contains, aggregate=aggregate, trait=trait)
    if hosts is not None:
        inventories = inventories.filter(provider__root_id__in=hosts.values("root_id"))
    if root_id is not None:
        inventories = inventories.filter(provider__root_id=root_id)
    if provider_uuids is not None:
        inventories = inventories.filter(provider__uuid__in=list(provider_uuids))
    return inventories


def why_included(rows, hosts):
    """{provider id: why it is listed} for a page of InventoryUsage rows: the provider
    matches the filters itself, or it is in the tree of one that does."""
    ids = [row.provider_id for row in rows]
    if hosts is None:
        return {}
    matching = set(hosts.filter(id__in=ids).values_list("id", flat=True))
    roots = dict(ResourceProvider.objects.filter(id__in=ids)
                 .values_list("id", "root__name"))
    return {pk: "matches the filters" if pk in matching else f"in the tree of {roots[pk]}"
            for pk in ids}


def left_out(resource_class, hosts, root_id=None, shown=20):
    """(count, [names]) of the trees the host filters select that hold no inventory of
    `resource_class` anywhere: they are left out (at most `shown` names, by name)."""
    if hosts is None:
        return 0, []
    roots = ResourceProvider.objects.filter(id__in=hosts.values("root_id")).exclude(
        id__in=Inventory.objects.filter(resource_class__name=resource_class)
        .values("provider__root_id"))
    if root_id is not None:
        roots = roots.filter(id=root_id)
    return roots.count(), list(roots.order_by("name").values_list("name", flat=True)[:shown])


def usage_rows(inventories):
    """The rows of `inventories` with their usage, by provider name, lazily (for a
    Paginator: a count, then one page); usages_of() turns a page into InventoryUsage."""
    return (with_usage(inventories).order_by("provider__name")
            .values_list(*USAGE_COLUMNS))


def usages_of(rows):
    return [InventoryUsage(*row) for row in rows]


@dataclasses.dataclass
class PreviewRow:
    """One provider's inventory of the class before and after the change."""

    before: object                  # InventoryUsage as it is now
    after: object                   # InventoryUsage with the change applied
    problem: str | None = None      # the service's refusal of the new record, if any
    holders: list = dataclasses.field(default_factory=list)  # [(consumer uuid, used)]

    @property
    def changed(self):
        return any(getattr(self.before, f) != getattr(self.after, f) for f in BULK_FIELDS)

    @property
    def goes_over(self):
        """Applying leaves more allocated than the new capacity (and it was not so before)."""
        return self.after.over_capacity and not self.before.over_capacity

    @property
    def target(self):
        """What the apply form posts for this row: "<uuid>:<generation>"."""
        return f"{self.before.provider_uuid}:{self.before.provider_generation}"


def _record(row):
    return {"total": row.total, "reserved": row.reserved,
            "allocation_ratio": row.allocation_ratio}


def record_problem(resource_class, usage):
    """The refusal inventory_set would give the record of `usage` (field ranges, then
    the capacity rule of the latest microversion), or None."""
    try:
        record = rules.inventory_record(resource_class, usage.provider_uuid, _record(usage))
        rules.check_capacity(resource_class, usage.provider_uuid, record,
                             rules.CAPACITY_NON_NEGATIVE)
    except DomainError as exc:
        return exc.message
    return None


def bulk_preview(*, resource_class, inventories, changes):
    """[PreviewRow] of `inventories` (bulk_matching: of `resource_class`), by provider
    name. `changes` maps some of BULK_FIELDS to their new value. Rows that would go
    over capacity list the consumers holding the class there (two queries)."""
    rows = []
    for usage in inventory_usages(inventories):
        after = dataclasses.replace(usage, **changes)
        rows.append(PreviewRow(usage, after, record_problem(resource_class, after)))
    over = {row.before.provider_id: row for row in rows if row.goes_over and not row.problem}
    if over:
        holders = (Allocation.objects
                   .filter(provider_id__in=list(over), resource_class__name=resource_class)
                   .order_by("provider_id", "consumer__uuid")
                   .values_list("provider_id", "consumer__uuid", "used"))
        for provider_id, consumer, used in holders:
            over[provider_id].holders.append((consumer, used))
    return rows


def matching_providers(*, name_contains="", aggregate=None, trait=None, root_id=None,
                       provider_uuids=None):
    """The providers (a lazy queryset) the filters select themselves, for the bulk edit
    of traits and aggregates: traits and aggregates sit on the provider they name (a
    host's, not its NUMA nodes'). Every provider when no filter is given."""
    providers = matching_hosts(name_contains=name_contains, aggregate=aggregate, trait=trait)
    if providers is None:
        providers = ResourceProvider.objects.all()
    if root_id is not None:
        providers = providers.filter(root_id=root_id)
    if provider_uuids is not None:
        providers = providers.filter(uuid__in=list(provider_uuids))
    return providers
