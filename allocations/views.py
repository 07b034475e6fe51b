"""Allocation pages of the operator UI: the dashboard, the usages table (and its CSV),
the status page (placement_status's health checks) and consumers.

Reads go through allocations.selectors; the usage bars are the provider
pages' (providers.ui.tree_layout.usage_row), so a bar means the same everywhere.
The consumer page's writes (move one allocation, remove all) each call one
service with the generations the page was rendered with, so a concurrent
change shows up as a conflict message; refusals name providers by name.
"""
import csv
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from allocations import selectors, services, status_checks
from allocations.forms import (
    ConsumerFilterForm, MoveAllocationForm, RemoveAllocationsForm, UsageFilterForm,
)
from allocations.models import UNKNOWN_CONSUMER_TYPE
from placement_site.domain_errors import SERVICE_ERRORS, error_message, is_concurrent_update
from placement_site.uuids import UUIDS_IN_TEXT
from providers.ui.change_log import change_log_section
from providers.models import ChangeRecord, ResourceProvider
from providers.rules import reported_capacity
from providers.ui.tree_layout import usage_row

CONSUMERS_PER_PAGE = 50

TOP_USAGE_ROWS = 10


@staff_member_required
@require_GET
def dashboard(request):
    counts = {
        "providers": ResourceProvider.objects.count(),
        "roots": ResourceProvider.objects.filter(parent__isnull=True).count(),
        **selectors.allocation_counts(),
    }
    top = [{**usage_row(inv, inv.used), "provider": inv.provider}
           for inv in selectors.inventories_most_used(limit=TOP_USAGE_ROWS)]
    return render(request, "ui/dashboard.html", {"counts": counts, "top": top})


GROUPINGS = {
    "project": ("consumer__project__external_id",),
    "user": ("consumer__project__external_id", "consumer__user__external_id"),
    "type": ("consumer__project__external_id", "consumer__user__external_id",
             "consumer__consumer_type__name"),
}
HEADERS = {"project": ["Project"], "user": ["Project", "User"],
           "type": ["Project", "User", "Consumer type"]}


def _usage_table(params):
    """The usages page's filter form and table for the query `params`; two queries.

    Returns (form, headers, classes, table): headers name the grouping columns,
    classes the resource class columns, and each table row has `cells` (the
    grouping values), `consumers` and `amounts` (per class, "" for none).
    """
    form = UsageFilterForm(params or None)
    valid = form.is_valid() if form.is_bound else True
    group_by = (form.cleaned_data.get("group_by") if form.is_bound and valid else None) or "type"
    # an invalid filter shows its errors, not unfiltered totals
    counts, sums = selectors.usages_grouped(
        group_by=GROUPINGS[group_by], filters=form.cleaned_filters() if valid else None)
    classes = sorted({rc for amounts in sums.values() for rc in amounts})
    table = []
    for key in sorted(counts.keys() | sums.keys(),
                      key=lambda k: tuple("" if v is None else v for v in k)):
        cells = list(key)
        if group_by == "type" and cells[2] is None:
            cells[2] = UNKNOWN_CONSUMER_TYPE
        amounts = sums.get(key, {})
        table.append({"cells": cells, "consumers": counts.get(key, 0),
                      "amounts": [amounts.get(rc, "") for rc in classes],
                      "consumers_query": _consumers_query(form if valid else None, cells)})
    return form, HEADERS[group_by], classes, table


@staff_member_required
@require_GET
def usages(request):
    """Totals of used resources per project (/user /consumer type); two queries."""
    form, headers, classes, table = _usage_table(request.GET)
    return render(request, "ui/usages.html", {
        "form": form, "headers": headers, "classes": classes, "table": table,
        "csv_query": request.GET.urlencode(),
    })


@staff_member_required
@require_GET
def usages_csv(request):
    """The usages table as the page shows it (same filters and grouping), as CSV.

    An invalid filter gives the header row only, as the page shows no totals.
    """
    _, headers, classes, table = _usage_table(request.GET)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="usages.csv"'
    writer = csv.writer(response)
    writer.writerow([*headers, "Consumers", *classes])
    for row in table:
        writer.writerow([*map(_csv_text, row["cells"]), row["consumers"], *row["amounts"]])
    return response


# A spreadsheet runs a cell starting with one of these as a formula; project and user ids
# are whatever API clients sent.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_text(value):
    """A text cell of a CSV export, quoted with ' when a spreadsheet would run it."""
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


@staff_member_required
@require_GET
def status(request):
    """The placement_status health checks (allocations.status_checks), each with its
    result, details, examples and advice; a fixed number of queries."""
    results, worst = status_checks.run_checks()
    return render(request, "ui/status.html", {
        "results": [{"title": title, "result": result,
                     "css": result.name.lower()} for title, result in results],
        "worst": status_checks.RESULT_NAMES[worst],
        "worst_css": status_checks.RESULT_NAMES[worst].lower(),
    })


def _consumers_query(form, cells):
    """The consumers list's query string for one usages row: the page's filters,
    narrowed to the row's project (, user (, type))."""
    values = {}
    if form is not None and form.is_bound:
        values = {name: form.cleaned_data.get(name) for name in
                  ("project", "user", "consumer_type")}
    values.update(zip(("project", "user", "consumer_type"), cells))
    return urlencode({name: value for name, value in values.items() if value})


# --------------------------------------------------------------------------
# Consumers
# --------------------------------------------------------------------------

@staff_member_required
@require_GET
def consumer_list(request):
    """Consumers by project / user / type (the usages filters) or uuid; paginated."""
    form = ConsumerFilterForm(request.GET or None)
    valid = form.is_valid() if form.is_bound else True
    consumers = selectors.consumer_list(
        filters=form.cleaned_filters(),
        query=form.cleaned_data.get("q", "") if form.is_bound and valid else "")
    if not valid:
        consumers = consumers.none()
    page = Paginator(consumers, CONSUMERS_PER_PAGE).get_page(request.GET.get("page"))
    holdings = selectors.consumer_holdings(consumer_ids=[c.id for c in page.object_list])
    kept = [(k, v) for k, v in request.GET.items() if k != "page" and v]
    return render(request, "ui/consumers.html", {
        "form": form, "page": page, "page_query": urlencode(kept),
        "rows": [{"consumer": c, "holdings": holdings.get(c.id, [])} for c in page.object_list],
    })


@staff_member_required
@require_GET
def consumer_detail(request, uuid):
    return _render_consumer(request, uuid)


def _render_consumer(request, uuid, *, bound_form=None, confirm_remove=None, status=200):
    """The consumer page: its allocations across providers, move and remove forms, and
    its change log. A consumer that no longer exists but has a history shows that."""
    consumer = selectors.consumer_get(uuid=uuid)
    log = change_log_section(request, kind=ChangeRecord.KIND_CONSUMER, entity=uuid)
    if consumer is None and not log["recorded"]:
        raise Http404(f"No consumer with uuid {uuid}")
    rows = selectors.consumer_allocation_rows(consumer_id=consumer.id) if consumer else []
    targets = selectors.move_targets(resource_class_ids=[a.resource_class_id for a in rows])
    allocations = []
    for allocation in rows:
        inventories, more = targets[allocation.resource_class_id]
        options = [(f"{inv.provider.uuid}:{inv.provider.generation}", _target_label(inv))
                   for inv in inventories if inv.provider_id != allocation.provider_id]
        allocations.append({"allocation": allocation, "targets": options, "more": more})
    return render(request, "ui/consumer.html", {
        "uuid": uuid,
        "consumer": consumer,
        "allocations": allocations,
        "providers": len({a.provider_id for a in rows}),
        "bound_form": bound_form,
        "confirm_remove": confirm_remove,
        "log": log,
    }, status=status)


def _target_label(inventory):
    capacity = reported_capacity(inventory.total, inventory.reserved,
                                 inventory.allocation_ratio)
    return (f"{inventory.provider.name} — {inventory.resource_class.name} "
            f"{inventory.used} / {capacity} used")


def _named(message):
    """The service's message with the provider uuids in it replaced by the names."""
    uuids = set(UUIDS_IN_TEXT.findall(message))
    names = dict(ResourceProvider.objects.filter(uuid__in=uuids).values_list("uuid", "name"))
    for rp_uuid, name in names.items():
        message = message.replace(rp_uuid, name)
    return message


def _refused(request, uuid, exc, what):
    """Show a service's refusal of a consumer page write, then reload the page."""
    text = _named(error_message(exc))
    if is_concurrent_update(exc):
        messages.error(request, (
            f"Not {what}: consumer {uuid} or one of its providers was changed by someone "
            f"else since this page was loaded ({text}). The page now shows the current "
            "state; please review and try again."))
    else:
        messages.error(request, f"Not {what}: {text}")
    if not selectors.consumer_known(uuid=uuid):  # its page would be a 404
        return redirect("ui:consumers")
    return redirect("ui:consumer", uuid=uuid)


@staff_member_required
@require_POST
def consumer_move(request, uuid):
    """Move one allocation to another provider: services.allocation_move, checked
    against the generations of the consumer and both providers shown on the page."""
    form = MoveAllocationForm(request.POST)
    if not form.is_valid():
        return _render_consumer(request, uuid, bound_form=form, status=400)
    data = form.cleaned_data
    target_uuid, target_generation = data["target"]
    try:
        amount = services.allocation_move(
            consumer_uuid=uuid, resource_class=data["resource_class"],
            source_uuid=data["source"], target_uuid=target_uuid,
            consumer_generation=data["consumer_generation"],
            source_generation=data["source_generation"], target_generation=target_generation)
    except SERVICE_ERRORS as exc:
        return _refused(request, uuid, exc, "moved")
    messages.success(request, _named(
        f"Moved {data['resource_class']}={amount} of consumer {uuid} from {data['source']} "
        f"to {target_uuid}."))
    return redirect("ui:consumer", uuid=uuid)


@staff_member_required
@require_POST
def consumer_remove(request, uuid):
    """Remove all of the consumer's allocations (after a confirmation), checked against
    the consumer generation shown on the page."""
    form = RemoveAllocationsForm(request.POST)
    if not form.is_valid():
        return _render_consumer(request, uuid, bound_form=form, status=400)
    generation = form.cleaned_data["consumer_generation"]
    if not form.cleaned_data["confirm"]:
        return _render_consumer(request, uuid, confirm_remove=generation)
    try:
        services.consumer_allocations_remove(consumer_uuid=uuid, generation=generation)
    except SERVICE_ERRORS as exc:
        return _refused(request, uuid, exc, "removed")
    messages.success(request, f"Removed every allocation of consumer {uuid}; the consumer "
                              "no longer exists.")
    return redirect("ui:consumer", uuid=uuid)
