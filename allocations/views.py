"""Allocation pages of the operator UI: the dashboard and the usages table.

Reads go through allocations.selectors; the usage bars are the provider
pages' (providers.views.usage_row), so a bar means the same everywhere.
"""
from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from allocations import selectors
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


@staff_member_required
@require_GET
def usages(request):
    """Totals of used resources per project (/user /consumer type); two queries."""
    form = UsageFilterForm(request.GET or None)
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
    return render(request, "ui/usages.html", {
        "form": form, "headers": HEADERS[group_by], "classes": classes, "table": table,
    })
