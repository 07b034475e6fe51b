"""Allocation pages of the operator UI: the dashboard, the usages table (and its CSV)
and the status page (placement_status's health checks); the consumer pages are in
console.consumers.consumers.

Reads go through allocations.selectors; the usage bars are the provider
pages' (console.providers.tree_layout.usage_row), so a bar means the same everywhere.
"""
import csv
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from console.door import LIST_PROVIDERS, USAGES, door
from allocations import selectors, status_checks
from console.consumers.forms import UsageFilterForm
from allocations.models import UNKNOWN_CONSUMER_TYPE
from foundation.spreadsheet import safe_cell
from providers.models import ResourceProvider
from console import numbers
from console.links import row_url
from allocations.usage import InventoryUsage, over_capacity_usages
from console.providers.tree_layout import usage_row

TOP_USAGE_ROWS = 10
OVER_PER_PAGE = 50   # over-capacity rows a page of the status page


@door(read=LIST_PROVIDERS)
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


USAGE_ROWS_PER_PAGE = 50


class UsageTable:
    """The usages page's filter form and table for the query `params`.

    headers name the grouping columns, classes the resource class columns; rows
    (a lazy sequence to page through, by the form's `sort`) are tuples
    (*group values, consumers, *sums); total() is (consumers, [sum per class])
    over every group. Reading it costs a fixed number of queries.
    """

    def __init__(self, params):
        form = self.form = UsageFilterForm(params or None)
        self.valid = form.is_valid() if form.is_bound else True
        data = form.cleaned_data if form.is_bound and self.valid else {}
        self.group_by = data.get("group_by") or "type"
        self.headers = HEADERS[self.group_by]
        # an invalid filter shows its errors, not unfiltered totals
        self.filters = form.cleaned_filters() if self.valid else None
        found = selectors.usage_classes(filters=self.filters)
        self.class_ids = [rc_id for rc_id, _ in found]
        self.classes = [name for _, name in found]
        self.sort = data.get("sort") or ""
        self.rows = selectors.usages_grouped(
            group_by=GROUPINGS[self.group_by], filters=self.filters,
            class_ids=self.class_ids, sort=self._sort())

    def _sort(self):
        """The selector's sort for the form's: "consumers" or a class name, largest
        first, "-" first for smallest first; anything else sorts by group."""
        column = self.sort.removeprefix("-")
        descending = not self.sort.startswith("-")
        if column == "consumers":
            return ("consumers", descending)
        if column in self.classes:
            return (self.classes.index(column), descending)
        return None

    def total(self):
        return selectors.usages_total(filters=self.filters, class_ids=self.class_ids)

    def cells(self, row):
        """A row's group values, an untyped group's type shown as "unknown"."""
        cells = list(row[:len(self.headers)])
        if self.group_by == "type" and cells[2] is None:
            cells[2] = UNKNOWN_CONSUMER_TYPE
        return cells

    def amounts(self, row):
        """A row's sums per class, "" where the group holds none."""
        return [amount or "" for amount in row[len(self.headers) + 1:]]


def _sort_links(params, classes):
    """{column: (query string sorting by it, arrow shown)} for the table headers: a
    column sorts largest first, a second click smallest first."""
    current = params.get("sort", "")
    kept = [(k, v) for k, v in params.items() if k not in ("sort", "page") and v]
    links = {}
    for column in ["consumers", *classes]:
        flip = current == column
        links[column] = (urlencode(kept + [("sort", "-" + column if flip else column)]),
                         "▼" if current == column else "▲" if current == "-" + column else "")
    return links


@door(read=USAGES)
@require_GET
def usages(request):
    """Totals of used resources per project (/user /consumer type), a page of groups at a
    time, sortable, with the totals of every group; a fixed number of queries."""
    usage = UsageTable(request.GET)
    page = Paginator(usage.rows, USAGE_ROWS_PER_PAGE).get_page(request.GET.get("page"))
    valid = usage.form if usage.form.is_bound and usage.valid else None
    table = []
    for row in page.object_list:
        cells, amounts = usage.cells(row), usage.amounts(row)
        table.append({"cells": cells, "consumers": row[len(cells)], "amounts": amounts,
                      "shown": [numbers.number(amount) for amount in amounts],
                      "consumers_query": _consumers_query(valid, cells)})
    totals = None
    if table:
        consumers, amounts = usage.total()
        totals = {"groups": page.paginator.count, "consumers": consumers, "amounts": amounts,
                  "shown": [numbers.number(amount) for amount in amounts]}
    links = _sort_links(request.GET, usage.classes)
    kept = [(k, v) for k, v in request.GET.items() if k != "page" and v]
    return render(request, "ui/usages.html", {
        "form": usage.form, "headers": usage.headers, "classes": usage.classes,
        "table": table, "totals": totals, "page": page, "page_query": urlencode(kept),
        "columns": [(rc, *links[rc]) for rc in usage.classes],
        "consumers_sort": links["consumers"], "consumers_url": reverse("ui:consumers"),
    })


@door(read=USAGES)
@require_GET
def usages_csv(request):
    """The usages table as the page shows it (same filters, grouping and order, every
    page), as CSV. An invalid filter gives the header row only, as the page shows no
    totals."""
    usage = UsageTable(request.GET)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="usages.csv"'
    writer = csv.writer(response)
    writer.writerow([*usage.headers, "Consumers", *usage.classes])
    for row in usage.rows:
        cells = usage.cells(row)
        writer.writerow([*map(safe_cell, cells), row[len(cells)], *usage.amounts(row)])
    return response


@door(read=LIST_PROVIDERS)
@require_GET
def status(request):
    """The placement_status health checks (allocations.status_checks), each with its
    result, details, examples and advice; a fixed number of queries."""
    results, worst = status_checks.run_checks()
    over = Paginator(over_capacity_usages(), OVER_PER_PAGE).get_page(request.GET.get("over-page"))
    return render(request, "ui/status.html", {
        "results": [{"title": title, "result": result,
                     "css": result.name.lower()} for title, result in results],
        "worst": status_checks.RESULT_NAMES[worst],
        "worst_css": status_checks.RESULT_NAMES[worst].lower(),
        "over": over, "over_rows": [InventoryUsage(*row) for row in over.object_list],
        "provider_url": row_url("ui:provider"),
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
