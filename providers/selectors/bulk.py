"""Reads for the bulk edit of allocation ratios and reserved amounts (/ui/bulk/).

bulk_candidates() lists the providers a change may apply to; bulk_preview()
computes what the change would do to each chosen one, with the same rules the
service applies (providers.rules: field ranges, the capacity rule of the latest
microversion, the capacity formula), without writing anything. Each preview
row carries the provider generation it was computed with: the apply step
writes with it, so a provider changed in between is a conflict, not
overwritten. A fixed number of queries each.
"""
import dataclasses

from foundation.domain_errors import DomainError
from providers import rules
from providers.models import Inventory, ResourceProvider
from providers.selectors.capacity import inventory_usages

# The inventory fields a bulk edit may change.
BULK_FIELDS = ("allocation_ratio", "reserved")


def bulk_candidates(*, resource_class, name_contains=""):
    """[InventoryUsage] of the `resource_class` inventories of providers whose name
    contains `name_contains` (any case), by provider name (one query)."""
    inventories = Inventory.objects.filter(resource_class__name=resource_class)
    if name_contains:
        inventories = inventories.filter(provider__name__icontains=name_contains)
    return inventory_usages(inventories)


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


def bulk_preview(*, resource_class, provider_uuids, changes):
    """[PreviewRow] of the chosen providers that have inventory of `resource_class`, by
    name. `changes` maps some of BULK_FIELDS to their new value. Rows that would go
    over capacity list the consumers holding the class there (two queries)."""
    before = bulk_candidates(resource_class=resource_class)
    chosen = set(provider_uuids)
    rows = []
    for usage in before:
        if usage.provider_uuid not in chosen:
            continue
        after = dataclasses.replace(usage, **changes)
        rows.append(PreviewRow(usage, after, record_problem(resource_class, after)))
    over = {row.before.provider_id: row for row in rows if row.goes_over and not row.problem}
    if over:
        holders = (ResourceProvider.objects
                   .filter(id__in=list(over), allocations__resource_class__name=resource_class)
                   .order_by("id", "allocations__consumer__uuid")
                   .values_list("id", "allocations__consumer__uuid", "allocations__used"))
        for provider_id, consumer, used in holders:
            over[provider_id].holders.append((consumer, used))
    return rows
