"""Operator web UI under /ui/: dashboard, provider trees, usages, candidate queries.

Server-rendered pages for staff users (Django admin login). Reads are a
constant number of queries per page, whatever the number of providers shown
(the tree page batches inventories, usages, traits and aggregates for all the
trees of a page). Every write goes through the same services as the API
(inventories, traits, aggregates) with the provider generation the page was
rendered with, so a concurrent change shows up as a conflict message.

The UI spans apps, so allocation models are looked up through the app
registry rather than imported (imports go providers <- allocations).
"""
import json
from collections import defaultdict
from urllib.parse import urlencode

from django.apps import apps
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.db.models import (
    Count, ExpressionWrapper, F, FloatField, IntegerField, OuterRef, Q, Subquery, Sum, Value,
)
from django.db.models.functions import Cast, NullIf
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from placement_site.domain_errors import ConcurrentUpdate, DomainError as PlacementError
from providers import forms
from providers.models import Inventory, ProviderAggregate, ProviderTrait, ResourceProvider
from providers.rules import capacity

ROOTS_PER_PAGE = 20
TOP_USAGE_ROWS = 10


def _allocation_model():
    return apps.get_model("allocations", "Allocation")


def _consumer_model():
    return apps.get_model("allocations", "Consumer")


# --------------------------------------------------------------------------
# Reads (a fixed number of queries each)
# --------------------------------------------------------------------------

def _usage_level(used, cap):
    """(percent for the bar width 0-100, css class, exact percent or None)."""
    if cap <= 0:
        return (100 if used else 0), ("over" if used else ""), None
    pct = used * 100.0 / cap
    css = "over" if pct > 100 else "high" if pct >= 85 else ""
    return min(pct, 100.0), css, pct


def _inventory_rows(inventories, usage):
    """Inventory rows with used/capacity for display; `usage` maps (rp_id, rc_id) -> used."""
    rows = []
    for inv in inventories:
        used = usage.get((inv.provider_id, inv.resource_class_id), 0)
        cap = int(capacity(inv.total, inv.reserved, inv.allocation_ratio))
        width, css, pct = _usage_level(used, cap)
        rows.append({"inv": inv, "rc": inv.resource_class.name, "used": used, "capacity": cap,
                     "width": f"{width:.1f}", "css": css, "pct": pct})
    rows.sort(key=lambda r: r["rc"])
    return rows


def _usage_map(provider_filter):
    """{(provider_id, resource_class_id): SUM(used)} for the providers matching the filter."""
    rows = (_allocation_model().objects.filter(**provider_filter).order_by()
            .values("provider_id", "resource_class_id").annotate(used=Sum("used")))
    return {(r["provider_id"], r["resource_class_id"]): r["used"] for r in rows}


def _tree_page(query, page_number):
    """One page of provider trees (roots paginated), with everything the table shows.

    Queries: count + page of roots, then one each for the providers, inventories,
    usages, traits and aggregates of those trees.
    """
    roots = ResourceProvider.objects.filter(parent__isnull=True)
    matching_ids = None
    if query:
        match = Q(name__icontains=query) | Q(uuid__icontains=query)
        roots = roots.filter(id__in=ResourceProvider.objects.filter(match).values("root_id"))
    paginator = Paginator(roots.order_by("name", "id").values_list("id", flat=True),
                          ROOTS_PER_PAGE)
    page = paginator.get_page(page_number)
    root_ids = list(page.object_list)
    trees = {root_id: [] for root_id in root_ids}
    if not root_ids:
        return page, []
    in_trees = {"provider__root_id__in": root_ids}
    providers = list(ResourceProvider.objects.filter(root_id__in=root_ids)
                     .order_by("tree_id", "lft"))
    if query:
        lowered = query.lower()
        matching_ids = {p.id for p in providers
                        if lowered in p.name.lower() or lowered in p.uuid.lower()}
    inventories = defaultdict(list)
    for inv in Inventory.objects.filter(**in_trees).select_related("resource_class"):
        inventories[inv.provider_id].append(inv)
    usage = _usage_map(in_trees)
    traits = defaultdict(list)
    for rp_id, name in (ProviderTrait.objects.filter(**in_trees)
                        .values_list("provider_id", "trait__name").order_by("trait__name")):
        traits[rp_id].append(name)
    aggregates = defaultdict(list)
    for rp_id, agg in (ProviderAggregate.objects.filter(**in_trees)
                       .values_list("provider_id", "aggregate__uuid").order_by("aggregate__uuid")):
        aggregates[rp_id].append(agg)
    for p in providers:
        trees.setdefault(p.root_id, []).append({
            "provider": p,
            "indent": range(p.level),
            "inventories": _inventory_rows(inventories[p.id], usage),
            "traits": traits[p.id],
            "aggregates": aggregates[p.id],
            "match": matching_ids is not None and p.id in matching_ids,
        })
    return page, [trees[root_id] for root_id in root_ids if trees.get(root_id)]


def _top_usage(limit=TOP_USAGE_ROWS):
    """The in-use inventories with the highest used/capacity ratio (one query).

    An inventory with allocations but no capacity left (ratio NULL) sorts first.
    """
    used = (_allocation_model().objects
            .filter(provider_id=OuterRef("provider_id"),
                    resource_class_id=OuterRef("resource_class_id"))
            .order_by().values("provider_id").annotate(s=Sum("used")).values("s")[:1])
    cap = ExpressionWrapper(Cast(F("total") - F("reserved"), FloatField()) * F("allocation_ratio"),
                            output_field=FloatField())
    rows = (Inventory.objects
            .annotate(used=Subquery(used, output_field=IntegerField()))
            .filter(used__gt=0)
            .annotate(ratio=Cast(F("used"), FloatField()) / NullIf(cap, Value(0.0)))
            .select_related("provider", "resource_class")
            .order_by(F("ratio").desc(nulls_first=True), "provider__name", "resource_class__name")
            [:limit])
    result = []
    for inv in rows:
        cap_value = int(capacity(inv.total, inv.reserved, inv.allocation_ratio))
        width, css, pct = _usage_level(inv.used, cap_value)
        result.append({"inv": inv, "provider": inv.provider, "rc": inv.resource_class.name,
                       "used": inv.used, "capacity": cap_value, "width": f"{width:.1f}",
                       "css": css, "pct": pct})
    return result


def _provider_or_404(uuid):
    provider = (ResourceProvider.objects.select_related("parent", "root")
                .filter(uuid=uuid).first())
    if provider is None:
        raise Http404(f"No resource provider with uuid {uuid}")
    return provider


def _provider_context(provider):
    """Everything the provider page shows (a fixed number of queries)."""
    Allocation = _allocation_model()
    children = list(provider.children.order_by("name"))
    inventories = list(provider.inventories.select_related("resource_class"))
    usage = _usage_map({"provider_id": provider.id})
    traits = list(ProviderTrait.objects.filter(provider=provider)
                  .values_list("trait__name", flat=True).order_by("trait__name"))
    aggregates = list(ProviderAggregate.objects.filter(provider=provider)
                      .values_list("aggregate__uuid", flat=True).order_by("aggregate__uuid"))
    consumers = {}
    for alloc in (Allocation.objects.filter(provider=provider)
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

@staff_member_required
@require_GET
def dashboard(request):
    Consumer = _consumer_model()
    Allocation = _allocation_model()
    counts = {
        "providers": ResourceProvider.objects.count(),
        "roots": ResourceProvider.objects.filter(parent__isnull=True).count(),
        "consumers": Consumer.objects.count(),
        "allocations": Allocation.objects.count(),
    }
    return render(request, "ui/dashboard.html", {"counts": counts, "top": _top_usage()})


@staff_member_required
@require_GET
def provider_tree(request):
    query = request.GET.get("q", "").strip()
    page, trees = _tree_page(query, request.GET.get("page"))
    return render(request, "ui/providers.html", {
        "q": query, "page": page, "trees": trees,
        "page_query": urlencode({"q": query}) if query else "",
    })


@staff_member_required
@require_GET
def provider_detail(request, uuid):
    provider = _provider_or_404(uuid)
    return _render_provider(request, provider, edit=request.GET.get("edit"))


def _render_provider(request, provider, bound_forms=None, status=200, edit=None):
    """The provider page; `bound_forms` replaces the blank form of one section after an error.

    `edit` names an inventory class whose values prefill the inventory form.
    """
    context = _provider_context(provider)
    generation = provider.generation
    inventory_initial = {"generation": generation}
    for row in context["inventory_rows"]:
        if row["rc"] == edit:
            inventory_initial.update(
                {field: getattr(row["inv"], field) for field in forms.rules.INVENTORY_FIELDS},
                resource_class=edit)
    page_forms = {
        "inventory_form": forms.InventoryForm(initial=inventory_initial, provider=provider),
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

def _report_service_error(request, provider, exc):
    if isinstance(exc, ConcurrentUpdate):
        messages.error(request, (
            f"Provider {provider.name} was changed by someone else since this page was "
            f"loaded (conflict: {exc.message}). The page now shows its current state; "
            "please review and try again."))
    else:
        messages.error(request, f"Not saved: {exc.message}")


def _save_form(request, provider, form, form_name):
    """Save one provider page form and redirect back to the page.

    An invalid form re-renders the page (400) with ``form`` bound under
    ``form_name``; a service error is reported as a message, not an error page.
    """
    if not form.is_valid():
        return _render_provider(request, provider, {form_name: form}, status=400)
    try:
        summary = form.save(provider)
    except PlacementError as exc:
        _report_service_error(request, provider, exc)
    else:
        messages.success(request, summary)
    return redirect("ui:provider", uuid=provider.uuid)


@staff_member_required
@require_POST
def provider_inventory(request, uuid):
    """Add/update or delete one inventory class (forms.InventoryForm.action)."""
    provider = _provider_or_404(uuid)
    form = forms.InventoryForm(request.POST, provider=provider)
    return _save_form(request, provider, form, "inventory_form")


@staff_member_required
@require_POST
def provider_traits(request, uuid):
    provider = _provider_or_404(uuid)
    form = forms.TraitsForm(request.POST)
    return _save_form(request, provider, form, "traits_form")


@staff_member_required
@require_POST
def provider_aggregates(request, uuid):
    provider = _provider_or_404(uuid)
    form = forms.AggregatesForm(request.POST)
    return _save_form(request, provider, form, "aggregates_form")


# --------------------------------------------------------------------------
# Usages
# --------------------------------------------------------------------------

GROUPINGS = {
    "project": ("consumer__project__external_id",),
    "user": ("consumer__project__external_id", "consumer__user__external_id"),
    "type": ("consumer__project__external_id", "consumer__user__external_id",
             "consumer__consumer_type__name"),
}


@staff_member_required
@require_GET
def usages(request):
    """Totals of used resources per project (/user /consumer type); two queries."""
    form = forms.UsageFilterForm(request.GET or None)
    valid = form.is_valid() if form.is_bound else True
    group_by = (form.cleaned_data.get("group_by") if form.is_bound and valid else None) or "type"
    keys = GROUPINGS[group_by]
    allocations = _allocation_model().objects.filter(**form.cleaned_filters()).order_by()
    if not valid:  # show the errors, not unfiltered totals
        allocations = allocations.none()
    sums = allocations.values(*keys, "resource_class__name").annotate(used=Sum("used"))
    counts = allocations.values(*keys).annotate(n=Count("consumer_id", distinct=True))
    rows = {}
    classes = set()
    for r in counts:
        key = tuple(r[k] for k in keys)
        rows[key] = {"key": key, "consumers": r["n"], "usages": {}}
    for r in sums:
        key = tuple(r[k] for k in keys)
        rows.setdefault(key, {"key": key, "consumers": 0, "usages": {}})
        rows[key]["usages"][r["resource_class__name"]] = r["used"]
        classes.add(r["resource_class__name"])
    classes = sorted(classes)
    table = []
    for key in sorted(rows, key=lambda k: tuple("" if v is None else v for v in k)):
        row = rows[key]
        cells = list(key)
        if group_by == "type" and cells[2] is None:
            cells[2] = "unknown"
        table.append({"cells": cells, "consumers": row["consumers"],
                      "amounts": [row["usages"].get(rc, "") for rc in classes]})
    headers = {"project": ["Project"], "user": ["Project", "User"],
               "type": ["Project", "User", "Consumer type"]}[group_by]
    return render(request, "ui/usages.html", {
        "form": form, "headers": headers, "classes": classes, "table": table,
    })


# --------------------------------------------------------------------------
# Allocation candidates
# --------------------------------------------------------------------------

def run_api_get(path, version):
    """GET `path` through the real API stack in-process; returns inprocess.Result.

    Speaks as an administrator (the page itself is staff-only), so the
    answer is what the API gives, minus policy differences between callers.
    """
    from placement_site.inprocess import PlacementClient

    return PlacementClient(version=version, token="admin").get(path)


def _candidate_tables(body):
    """Normalise any microversion's answer into rows for the two tables."""
    summaries = body.get("provider_summaries") or {}
    requests = body.get("allocation_requests") or []
    uuids = set(summaries)
    normalised = []
    for req in requests:
        allocations = req.get("allocations") or {}
        if isinstance(allocations, list):  # 1.10-1.11 list form
            allocations = {a["resource_provider"]["uuid"]: {"resources": a["resources"]}
                           for a in allocations}
        uuids.update(allocations)
        mappings = req.get("mappings") or {}
        for group_uuids in mappings.values():
            uuids.update(group_uuids)
        normalised.append({"allocations": allocations, "mappings": mappings})
    names = dict(ResourceProvider.objects.filter(uuid__in=uuids).values_list("uuid", "name"))
    candidate_rows = []
    for index, req in enumerate(normalised, start=1):
        candidate_rows.append({
            "index": index,
            "allocations": [
                {"uuid": u, "name": names.get(u, ""),
                 "resources": sorted(a.get("resources", {}).items())}
                for u, a in sorted(req["allocations"].items(), key=lambda i: names.get(i[0], i[0]))
            ],
            "mappings": sorted((suffix or '""', [names.get(u, u) for u in us])
                               for suffix, us in req["mappings"].items()),
        })
    summary_rows = []
    for u, summary in summaries.items():
        root = summary.get("root_provider_uuid")
        parent = summary.get("parent_provider_uuid")
        summary_rows.append({
            "uuid": u, "name": names.get(u, ""),
            "root": root, "root_name": names.get(root, ""),
            "parent": parent, "parent_name": names.get(parent, ""),
            "resources": sorted((rc, r.get("used"), r.get("capacity"))
                                for rc, r in (summary.get("resources") or {}).items()),
            "traits": sorted(summary.get("traits") or []),
            "has_tree": "root_provider_uuid" in summary,
            "has_traits": "traits" in summary,
        })
    summary_rows.sort(key=lambda r: (names.get(r["root"], r["root"] or ""), r["name"]))
    return candidate_rows, summary_rows


@staff_member_required
@require_GET
def candidates(request):
    form = forms.CandidatesForm(request.GET if "q" in request.GET else None)
    context = {"form": form}
    if form.is_bound and form.is_valid():
        path = form.api_path()
        version = form.cleaned_data["version"]
        result = run_api_get(path, version)
        context.update({"ran": True, "status": result.status, "api_path": path,
                        "version": version,
                        "raw": json.dumps(result.body, indent=2, sort_keys=True)})
        if result.status == 200 and isinstance(result.body, dict):
            context["candidate_rows"], context["summary_rows"] = _candidate_tables(result.body)
        else:
            try:
                error = result.body["errors"][0]
            except (TypeError, KeyError, IndexError):
                error = {}
            context["error"] = {
                "status": result.status,
                "title": error.get("title", ""),
                "code": error.get("code", ""),
                "detail": " ".join(result.error_detail().split())
                          or "The API returned no error detail.",
            }
    return render(request, "ui/candidates.html", context)
