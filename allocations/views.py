"""Allocation pages of the operator UI: the dashboard, the usages table (and its CSV)
and the status page (placement_status's health checks).

Reads go through allocations.selectors; the usage bars are the provider
pages' (providers.views.usage_row), so a bar means the same everywhere.
"""
import csv

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from allocations import selectors, status_checks
from allocations.forms import UsageFilterForm
from allocations.models import UNKNOWN_CONSUMER_TYPE
from providers.models import ResourceProvider
from providers.views import usage_row

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
                      "amounts": [amounts.get(rc, "") for rc in classes]})
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
