"""What a host's page shows of its whole tree (/ui/providers/<uuid>/): the usage of
every provider below it, class by class, and the consumers holding anything there
(sortable, paged, and as CSV). For a provider without children it is its own.

"""
import csv

from django.core.paginator import Paginator
from django.db.models import Q, Sum
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from console.door import PROVIDER_ALLOCATIONS, door
from foundation.spreadsheet import safe_cell
from allocations.models import Allocation
from allocations.usage import capacity_by_class, inventory_usages
from console.providers.lookup import provider_or_404
from providers.models import Inventory, ResourceProvider

CONSUMERS_PER_PAGE = 50
SORTS = ("consumer", "project")    # and "-<CLASS>": most of that class first


def subtree(provider):
    """The providers of `provider`'s subtree (itself included), as a queryset."""
    if provider.parent_id is None:
        return ResourceProvider.objects.filter(root_id=provider.id)
    return provider.get_descendants(include_self=True)


def tree_usage(provider):
    """[ClassCapacity] of the subtree, by class (one query); None for a provider without
    children (its inventory table says it all)."""
    if provider.is_leaf_node():
        return None
    return capacity_by_class(inventory_usages(
        Inventory.objects.filter(provider__in=subtree(provider))))


def _holding(provider):
    """The allocations against the providers of the subtree."""
    return Allocation.objects.filter(provider__in=subtree(provider).values("id"))


def clean_sort(value, classes):
    if value in SORTS or (value.startswith("-") and value[1:] in classes):
        return value
    return "consumer"


def consumers_page(provider, number, sort="consumer"):
    """(Page, [{consumer uuid, project, user, type, resources: [(class, used, provider
    name)]}]) of the consumers holding something in the subtree, CONSUMERS_PER_PAGE a
    page, by uuid, by project, or ("-VCPU") most of a class first. Three queries: the
    count, the page's consumer ids, the page's allocations."""
    holders = _holding(provider)
    if sort.startswith("-"):
        holders = holders.values("consumer_id", "consumer__uuid").annotate(
            amount=Sum("used", filter=Q(resource_class__name=sort[1:])))
        order = ("-amount", "consumer__uuid")
    else:
        holders = holders.values("consumer_id", "consumer__uuid",
                                 "consumer__project__external_id").annotate(amount=Sum("used"))
        order = (("consumer__project__external_id", "consumer__uuid")
                 if sort == "project" else ("consumer__uuid",))
    page = Paginator(holders.order_by(*order), CONSUMERS_PER_PAGE).get_page(number)
    ids = [row["consumer_id"] for row in page.object_list]
    entries = {consumer_id: None for consumer_id in ids}
    for row in (_holding(provider).filter(consumer_id__in=ids)
                .order_by("resource_class__name", "provider__name")
                .values_list("consumer_id", "consumer__uuid", "consumer__project__external_id",
                             "consumer__user__external_id", "consumer__consumer_type__name",
                             "resource_class__name", "used", "provider__name")):
        consumer_id, uuid, project, user, kind, rc, used, where = row
        if entries[consumer_id] is None:
            entries[consumer_id] = {"uuid": uuid, "project": project, "user": user,
                                    "type": kind or "unknown", "resources": []}
        entries[consumer_id]["resources"].append((rc, used, where))
    return page, [entry for entry in entries.values() if entry is not None]


@door(read=PROVIDER_ALLOCATIONS)
@require_GET
def consumers_csv(request, uuid):
    """Every allocation in the provider's subtree: consumer, project, user, type, provider,
    class, used (one query)."""
    provider = provider_or_404(uuid)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="consumers-{provider.uuid}.csv"'
    writer = csv.writer(response)
    writer.writerow(["consumer", "project", "user", "type", "provider", "resource_class",
                     "used"])
    for row in (_holding(provider).order_by("consumer__uuid", "provider__name",
                                            "resource_class__name")
                .values_list("consumer__uuid", "consumer__project__external_id",
                             "consumer__user__external_id", "consumer__consumer_type__name",
                             "provider__name", "resource_class__name", "used")):
        writer.writerow([safe_cell(value) for value in row])
    return response
