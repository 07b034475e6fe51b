"""The provider list of the operator UI (/ui/providers/): trees, subtrees, CSV.

Server-rendered pages for staff users (Django admin login). The tree page
filters like GET /resource_providers (console.providers.filtersets), orders trees by
name or usage, lays them out as collapsible subtrees with subtree totals
(console.providers.tree_layout) and loads big trees progressively (provider_subtree
answers the "more" links); providers_csv exports the filtered list. Reads
are a constant number of queries per page, whatever the number of providers
shown (console.providers.tree_reads batches inventories, usages, traits and
aggregates for all the trees of a page).
"""
import csv

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from console.door import LIST_PROVIDERS, door
from foundation.spreadsheet import safe_cell
from console.providers.filtersets import ProviderFilterSet
from providers.models import ResourceProvider
from console.providers import tree_reads as trees
from console.providers import forms
from console.links import row_url
from console.providers.lookup import provider_or_404
from console.providers.tree_layout import Forest, layout_children, layout_trees

ROOTS_PER_PAGE = 20

# Set on fragment answers: providers.js inserts only those (a login page that a
# lapsed session redirects to is not spliced into the tree).
FRAGMENT_HEADER = "X-Placement-Fragment"


def _filter_query(request):
    """The request's filters as a query string, without the page and fragment keys."""
    params = QueryDict(mutable=True)
    for key, values in request.GET.lists():
        kept = [value for value in values if value]   # a form's blank boxes say nothing
        if key not in ("page", "start", "fragment") and kept:
            params.setlist(key, kept)
    return params.urlencode()


def _forest(providers, matching):
    """A tree_layout.Forest of `providers` (whole trees or one whole subtree);
    `matching`: the filtered providers, or None when nothing is filtered. 6 queries."""
    matches = None
    if matching is not None:
        matches = set(matching.filter(id__in=providers.values("id"))
                      .values_list("id", flat=True))
    traits, aggregates = trees.tags(providers)
    return Forest(trees.tree_nodes(providers), trees.usage_by_class(providers),
                  traits, aggregates, matches)


def _ordered_roots(roots, sort, usage_of):
    """Root ids in page order: by name (a lazy query the paginator slices), or by the
    usage of their whole tree (`sort` "-usage" fullest first, "usage" emptiest first),
    ties by name."""
    if sort == "name":
        return roots.order_by("name", "id").values_list("id", flat=True)
    ratios = trees.usage_ratios(ResourceProvider.objects.filter(root_id__in=roots.values("id")),
                                group_by="root_id", resource_class=usage_of)
    sign = -1 if sort == "-usage" else 1
    return [root_id for root_id, name in sorted(
        roots.values_list("id", "name"), key=lambda r: (sign * ratios.get(r[0], 0.0), r[1]))]


def _tree_page(filterset, matching, page_number):
    """One page of provider trees (roots paginated) laid out for the template.

    Queries: count + page of roots (or the usage order), then the providers,
    inventories, usages, traits, aggregates and matches of those trees.
    """
    filtered = filterset.is_filtering()
    roots = (trees.roots_of(matching) if filtered
             else ResourceProvider.objects.filter(parent__isnull=True))
    page = Paginator(_ordered_roots(roots, *filterset.sort_key()), ROOTS_PER_PAGE).get_page(
        page_number)
    root_ids = list(page.object_list)
    if not root_ids:
        return page, []
    forest = _forest(ResourceProvider.objects.filter(root_id__in=root_ids),
                     matching if filtered else None)
    return page, layout_trees(forest, [forest.nodes[root_id] for root_id in root_ids])


def _list_context(request, filterset):
    """What the list, subtree and fragment templates share: the filters, their query
    string, and URL prefixes reversed once rather than once a row."""
    query = _filter_query(request)
    list_url = reverse("ui:providers")
    return {"filter": filterset, "query": query, "list_url": list_url,
            # a tag adds one more required= / member_of= to the filters shown
            "tag_url": f"{list_url}?{query}&" if query else f"{list_url}?",
            "provider_url": row_url("ui:provider"),
            "subtree_url": row_url("ui:provider-subtree"),
            "resource_class_names": forms.resource_class_names()}


@door(read=LIST_PROVIDERS)
@require_GET
def provider_tree(request):
    """The provider trees, filtered like GET /resource_providers (console.providers.filtersets).
    A refused filter value shows the API's message as a form error."""
    filterset = ProviderFilterSet(request.GET, queryset=ResourceProvider.objects.all())
    context = _list_context(request, filterset)
    matching = filterset.matching()
    if matching is None:
        return render(request, "ui/providers.html", context)
    number = request.GET.get("page")
    page, entries = _tree_page(filterset, matching, number)
    if number is not None and str(page.number) != number.strip():
        messages.warning(request, f"There is no page {number!r}: this is page {page.number} "
                                  f"of {page.paginator.num_pages}.")
    context.update({
        "page": page, "entries": entries, "filtered": filterset.is_filtering(),
        "page_range": page.paginator.get_elided_page_range(page.number, on_each_side=2,
                                                           on_ends=1),
    })
    if context["filtered"]:
        context["match_count"] = matching.count()
    return render(request, "ui/providers.html", context)


@door(read=LIST_PROVIDERS)
@require_GET
def provider_subtree(request, uuid):
    """The children of one provider from index `start`, with their subtrees, under the
    list's filters: what a "more" link of the tree page stands for. With
    `fragment=1` only the rows (static/ui/providers.js inserts them in place),
    otherwise a page of its own (the same link without JavaScript)."""
    parent = provider_or_404(uuid)
    filterset = ProviderFilterSet(request.GET, queryset=ResourceProvider.objects.all())
    context = _list_context(request, filterset)
    fragment = request.GET.get("fragment") == "1"
    matching = filterset.matching()
    if matching is None:
        if fragment:
            return HttpResponse(status=400)
        return render(request, "ui/provider_subtree.html", {**context, "parent": parent})
    try:
        start = max(0, int(request.GET.get("start", 0)))
    except ValueError:
        start = 0
    forest = _forest(parent.get_descendants(include_self=True),
                     matching if filterset.is_filtering() else None)
    entries = layout_children(forest, forest.nodes[parent.pk], start)
    context.update({"parent": parent, "entries": entries, "start": start})
    if fragment:
        response = render(request, "ui/_tree_rows.html", context)
        response[FRAGMENT_HEADER] = "tree-rows"
        return response
    return render(request, "ui/provider_subtree.html", context)


@door(read=LIST_PROVIDERS)
@require_GET
def providers_csv(request):
    """The filtered providers as CSV, one row each (flat, not paginated): uuid, name,
    generation, parent and root uuids, traits and aggregates (space-separated),
    then used and capacity of every resource class any of them has. Ordered by
    name, or by the provider's own usage when the list is sorted by usage."""
    filterset = ProviderFilterSet(request.GET, queryset=ResourceProvider.objects.all())
    matching = filterset.matching()
    if matching is None:
        problems = [f"{name}: {error}" for name, errors in filterset.form.errors.items()
                    for error in errors]
        return HttpResponse("\n".join(problems) + "\n", status=400,
                            content_type="text/plain; charset=utf-8")
    rows = trees.export_rows(matching)
    sort, usage_of = filterset.sort_key()
    if sort != "name":
        ratios = trees.usage_ratios(matching, group_by="id", resource_class=usage_of)
        sign = -1 if sort == "-usage" else 1
        rows.sort(key=lambda row: sign * ratios.get(row["id"], 0.0))  # stable: names stay in order
    usage = trees.usage_by_class(matching)
    traits, aggregates = trees.tags(matching)
    classes = sorted({rc for by_class in usage.values() for rc, _, _ in by_class})
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="resource_providers.csv"'
    writer = csv.writer(response)
    writer.writerow(["uuid", "name", "generation", "parent_provider_uuid",
                     "root_provider_uuid", "traits", "aggregates",
                     *[f"{rc} {what}" for rc in classes for what in ("used", "capacity")]])
    for row in rows:
        amounts = {rc: (used, capacity) for rc, used, capacity in usage.get(row["id"], ())}
        writer.writerow([
            row["uuid"], safe_cell(row["name"]), row["generation"],
            row["parent_uuid"] or "", row["root_uuid"],
            " ".join(traits.get(row["id"], ())), " ".join(aggregates.get(row["id"], ())),
            *[value for rc in classes for value in amounts.get(rc, ("", ""))]])
    return response
