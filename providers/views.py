"""Provider pages of the operator UI (/ui/providers/): trees and one provider.

Server-rendered pages for staff users (Django admin login). The tree page
filters like GET /resource_providers (providers.filtersets), orders trees by
name or usage, lays them out as collapsible subtrees with subtree totals
(providers.tree_layout) and loads big trees progressively (provider_subtree
answers the "more" links); providers_csv exports the filtered list. Reads
are a constant number of queries per page, whatever the number of providers
shown (providers.selectors.trees batches inventories, usages, traits and
aggregates for all the trees of a page). Every write goes through the same services as the API
(inventories, traits, aggregates) with the provider generation the page was
rendered with, so a concurrent change shows up as a conflict message.

Imports go providers <- allocations: usage and allocations are read through
the reverse relation ``ResourceProvider.allocations``, never the model.
"""
import csv

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Sum
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from placement_site.service_errors import SERVICE_ERRORS, error_message, is_concurrent_update
from providers import forms
from providers.change_log_page import change_log_section
from providers.filtersets import ProviderFilterSet
from providers.models import (
    ChangeRecord, Inventory, ProviderAggregate, ProviderTrait, ResourceProvider,
)
from providers.rules import INVENTORY_FIELDS, reported_capacity
from providers.selectors import trees
from providers.tree_layout import Forest, layout_children, layout_trees, usage_bar

ROOTS_PER_PAGE = 20

# Set on fragment answers: providers.js inserts only those (a login page that a
# lapsed session redirects to is not spliced into the tree).
FRAGMENT_HEADER = "X-Placement-Fragment"


# --------------------------------------------------------------------------
# Reads (a fixed number of queries each)
# --------------------------------------------------------------------------

def usage_row(inv, used):
    """One inventory's usage bar: {inv, rc, used, capacity, width, css, pct}.

    `inv` has its resource_class loaded; shared with the dashboard (allocations.views).
    """
    cap = reported_capacity(inv.total, inv.reserved, inv.allocation_ratio)
    return {"inv": inv, **usage_bar(inv.resource_class.name, used, cap)}


def _inventory_rows(inventories, usage):
    """Inventory rows with used/capacity for display; `usage` maps (rp_id, rc_id) -> used."""
    rows = [usage_row(inv, usage.get((inv.provider_id, inv.resource_class_id), 0))
            for inv in inventories]
    rows.sort(key=lambda r: r["rc"])
    return rows


def _usage_map(providers):
    """{(provider_id, resource_class_id): SUM(used)} over a queryset of providers (one query)."""
    rows = (providers.filter(allocations__isnull=False).order_by()
            .values("id", "allocations__resource_class_id")
            .annotate(used=Sum("allocations__used")))
    return {(r["id"], r["allocations__resource_class_id"]): r["used"] for r in rows}


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


def _provider_or_404(uuid):
    provider = (ResourceProvider.objects.select_related("parent", "root")
                .filter(uuid=uuid).first())
    if provider is None:
        raise Http404(f"No resource provider with uuid {uuid}")
    return provider


def _provider_context(provider):
    """Everything the provider page shows (a fixed number of queries)."""
    children = list(provider.children.order_by("name"))
    inventories = list(provider.inventories.select_related("resource_class"))
    usage = _usage_map(ResourceProvider.objects.filter(pk=provider.pk))
    traits = list(ProviderTrait.objects.filter(provider=provider)
                  .values_list("trait__name", flat=True).order_by("trait__name"))
    aggregates = list(ProviderAggregate.objects.filter(provider=provider)
                      .values_list("aggregate__uuid", flat=True).order_by("aggregate__uuid"))
    consumers = {}
    for alloc in (provider.allocations
                  .select_related("consumer__project", "consumer__user",
                                  "consumer__consumer_type", "resource_class")
                  .order_by("consumer__uuid", "resource_class__name")):
        entry = consumers.setdefault(alloc.consumer_id, {"consumer": alloc.consumer, "resources": []})
        entry["resources"].append((alloc.resource_class.name, alloc.used))
    return {
        "provider": provider,
        "children": children,
        "inventory_rows": _inventory_rows(inventories, usage),
        "traits": traits,
        "aggregates": aggregates,
        "consumers": list(consumers.values()),
    }


# --------------------------------------------------------------------------
# Pages
# --------------------------------------------------------------------------

def _list_context(request, filterset):
    """What the list, subtree and fragment templates share: the filters, their query
    string, and URL prefixes reversed once rather than once a row."""
    query = _filter_query(request)
    list_url = reverse("ui:providers")
    return {"filter": filterset, "query": query, "list_url": list_url,
            # a tag adds one more required= / member_of= to the filters shown
            "tag_url": f"{list_url}?{query}&" if query else f"{list_url}?",
            "provider_url": list_url,   # ui:provider is <list_url><uuid>/, its subtree .../subtree/
            "resource_class_names": forms.resource_class_names()}


@staff_member_required
@require_GET
def provider_tree(request):
    """The provider trees, filtered like GET /resource_providers (providers.filtersets).
    A refused filter value shows the API's message as a form error."""
    filterset = ProviderFilterSet(request.GET, queryset=ResourceProvider.objects.all())
    context = _list_context(request, filterset)
    matching = filterset.matching()
    if matching is None:
        return render(request, "ui/providers.html", context)
    page, entries = _tree_page(filterset, matching, request.GET.get("page"))
    context.update({
        "page": page, "entries": entries, "filtered": filterset.is_filtering(),
        "page_range": page.paginator.get_elided_page_range(page.number, on_each_side=2,
                                                           on_ends=1),
    })
    if context["filtered"]:
        context["match_count"] = matching.count()
    return render(request, "ui/providers.html", context)


@staff_member_required
@require_GET
def provider_subtree(request, uuid):
    """The children of one provider from index `start`, with their subtrees, under the
    list's filters: what a "more" link of the tree page stands for. With
    `fragment=1` only the rows (static/ui/providers.js inserts them in place),
    otherwise a page of its own (the same link without JavaScript)."""
    parent = _provider_or_404(uuid)
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


# Spreadsheets run a cell that starts with one of these as a formula.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_text(value):
    return f"'{value}" if value.startswith(_FORMULA_START) else value


@staff_member_required
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
            row["uuid"], _csv_text(row["name"]), row["generation"],
            row["parent_uuid"] or "", row["root_uuid"],
            " ".join(traits.get(row["id"], ())), " ".join(aggregates.get(row["id"], ())),
            *[value for rc in classes for value in amounts.get(rc, ("", ""))]])
    return response


@staff_member_required
@require_GET
def provider_detail(request, uuid):
    provider = _provider_or_404(uuid)
    return _render_provider(request, provider, edit=request.GET.get("edit"))


def _render_provider(request, provider, bound_forms=None, status=200, edit=None, confirm=None):
    """The provider page; `bound_forms` replaces the blank form of one section after an error.

    `edit` names an inventory class whose values prefill the inventory form;
    `confirm` is an inventory change waiting for confirmation (_inventory_confirmation).
    """
    context = _provider_context(provider)
    context["confirm"] = confirm
    context["log"] = change_log_section(request, kind=ChangeRecord.KIND_PROVIDER,
                                        entity=provider.uuid)
    generation = provider.generation
    inventory_initial = {"generation": generation}
    for row in context["inventory_rows"]:
        if row["rc"] == edit:
            inventory_initial.update(
                {field: getattr(row["inv"], field) for field in INVENTORY_FIELDS},
                resource_class=edit)
    page_forms = {
        "inventory_form": forms.InventoryForm(initial=inventory_initial),
        "traits_form": forms.TraitsForm(
            initial={"generation": generation, "traits": "\n".join(context["traits"])}),
        "aggregates_form": forms.AggregatesForm(
            initial={"generation": generation, "aggregates": "\n".join(context["aggregates"])}),
    }
    page_forms.update(bound_forms or {})
    context.update(page_forms)
    context["resource_class_names"] = forms.resource_class_names()
    return render(request, "ui/provider.html", context, status=status)


# --------------------------------------------------------------------------
# Writes (POST only; each calls one service with the page's generation)
# --------------------------------------------------------------------------

def provider_refusal(exc, provider):
    """The service's refusal with the provider named as operators know it.

    Placement's messages carry the provider's uuid; provider names are unique,
    so the name alone identifies it on a page that is about that provider.
    """
    return error_message(exc).replace(provider.uuid, provider.name)


def _save_form(request, provider, form, form_name):
    """Save one provider page form and redirect back to the page.

    An invalid form, or one the service refuses, re-renders the page (400)
    with ``form`` bound under ``form_name``: the typed values stay and the
    service's message is a form error. A generation conflict instead reloads
    the page with a message, since the values shown are no longer current.
    """
    if form.is_valid():
        try:
            summary = form.save(provider)
        except SERVICE_ERRORS as exc:
            if is_concurrent_update(exc):
                messages.error(request, (
                    f"Provider {provider.name} was changed by someone else since this page "
                    f"was loaded (conflict: {provider_refusal(exc, provider)}). The page now shows its "
                    "current state; please review and try again."))
                return redirect("ui:provider", uuid=provider.uuid)
            form.add_error(None, provider_refusal(exc, provider))
        else:
            messages.success(request, summary)
            return redirect("ui:provider", uuid=provider.uuid)
    return _render_provider(request, provider, {form_name: form}, status=400)


# Each editable section of the provider page: its form class and context name.
SECTIONS = {
    "inventory": (forms.InventoryForm, "inventory_form"),  # add/update or delete one class
    "traits": (forms.TraitsForm, "traits_form"),
    "aggregates": (forms.AggregatesForm, "aggregates_form"),
}


def _inventory_confirmation(request, provider, form):
    """What a valid inventory change needs confirmed, or None to save it at once.

    A delete is always confirmed. A save is confirmed when it leaves less capacity
    than is already used: Placement accepts that (the provider is then over
    capacity and takes no new allocations of the class), so the page says so and
    lists the consumers holding the class here before saving.
    """
    rc = form.cleaned_data["resource_class"]
    repost = [(name, value) for name in request.POST if name not in ("csrfmiddlewaretoken",)
              for value in request.POST.getlist(name)]
    if form.cleaned_data["action"] == "delete":
        return {"rc": rc, "delete": True, "repost": repost}
    record = form.record()
    capacity = reported_capacity(record["total"], record["reserved"], record["allocation_ratio"])
    holders = list(provider.allocations.filter(resource_class__name=rc)
                   .order_by("consumer__uuid").values_list("consumer__uuid", "used"))
    used = sum(amount for _, amount in holders)
    if used <= capacity:
        return None
    return {"rc": rc, "delete": False, "repost": repost, "capacity": capacity, "used": used,
            "holders": holders}


@staff_member_required
@require_POST
def provider_edit(request, uuid, section):
    """Save one section's form (SECTIONS) of the provider page.

    An inventory change that deletes a class or cuts capacity below usage is
    first shown for confirmation; the confirming POST carries `confirm`.
    """
    provider = _provider_or_404(uuid)
    form_class, form_name = SECTIONS[section]
    form = form_class(request.POST)
    if section == "inventory" and "confirm" not in request.POST and form.is_valid():
        confirm = _inventory_confirmation(request, provider, form)
        if confirm is not None and _service_accepts(form, provider):
            return _render_provider(request, provider, {form_name: form}, confirm=confirm)
    return _save_form(request, provider, form, form_name)


class _DryRun(Exception):
    """Rolls back a save that was only tried."""


def _service_accepts(form, provider):
    """Whether the service would save the form (tried, then rolled back): a change
    it refuses is shown as its refusal, not offered for confirmation."""
    try:
        with transaction.atomic():
            form.save(provider)
            raise _DryRun
    except _DryRun:
        return True
    except SERVICE_ERRORS:
        return False
    finally:
        provider.refresh_from_db()
