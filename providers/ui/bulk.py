"""Bulk edit of allocation ratios and reserved amounts (/ui/bulk/).

Three steps, no script:

1. GET  /ui/bulk/?resource_class=VCPU&name=cn — the providers with inventory of
   the class (name filter), each with a tick box, and the change to make;
2. POST /ui/bulk/preview — before -> after for each ticked provider: the new
   capacity, refusals the service would give, providers that would go over
   capacity with the consumers holding the class there; nothing is written;
3. POST /ui/bulk/apply — the change, provider by provider, with the generation
   each preview row was computed with (providers.services.inventory_bulk): a
   provider changed since the preview is reported as a conflict, the others are
   applied. Back to step 1 with a message per outcome.

Reads are a fixed number of queries (providers.selectors.bulk).
"""
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from providers.ui import bulk_forms
from foundation.ui.links import row_url
from providers.selectors import bulk as selectors
from providers.services import inventory_bulk

NAMES_IN_MESSAGE = 20  # providers named in the "applied" message; the rest are counted


def _list_url(resource_class, name):
    query = {"resource_class": resource_class}
    if name:
        query["name"] = name
    return f"{reverse('ui:bulk')}?{urlencode(query)}"


def _outcome(row):
    """The outcome of one preview row, a css class that templates/ui/bulk_preview.html
    explains."""
    if row.problem:
        return "refused"
    if row.goes_over:
        return "goes-over"
    if row.after.over_capacity:
        return "stays-over"
    return "ok" if row.changed else "unchanged"


def _render_list(request, form, change_form=None, ticked=None):
    """Step 1: the filter, the matching providers and the change form."""
    rows = []
    if form.is_bound and form.is_valid():
        rows = selectors.bulk_candidates(resource_class=form.cleaned_data["resource_class"],
                                         name_contains=form.cleaned_data["name"])
    if change_form is None:
        initial = form.cleaned_data if form.is_bound and form.is_valid() else {}
        change_form = bulk_forms.BulkPreviewForm(initial=initial)
    ticked = None if ticked is None else set(ticked)
    return render(request, "ui/bulk.html", {
        "form": form, "change_form": change_form, "rows": rows, "ticked": ticked,
        "provider_url": row_url("ui:provider"),
        "class_names": bulk_forms.class_names(),
    })


@staff_member_required
@require_GET
def bulk_edit(request):
    return _render_list(request, bulk_forms.BulkFilterForm(request.GET or None))


@staff_member_required
@require_POST
def bulk_preview(request):
    form = bulk_forms.BulkPreviewForm(request.POST)
    if not form.is_valid():
        filter_form = bulk_forms.BulkFilterForm({"resource_class": request.POST.get(
            "resource_class", ""), "name": request.POST.get("name", "")})
        return _render_list(request, filter_form, change_form=form,
                            ticked=request.POST.getlist("provider"))
    data = form.cleaned_data
    rows = selectors.bulk_preview(resource_class=data["resource_class"],
                                  provider_uuids=data["provider"], changes=form.changes())
    return render(request, "ui/bulk_preview.html", {
        "form": form, "changes": form.changes(),
        "rows": rows, "outcomes": [(row, _outcome(row)) for row in rows],
        "provider_url": row_url("ui:provider"),
        "applicable": [row for row in rows if not row.problem],
        "refused": [row for row in rows if row.problem],
        "going_over": [row for row in rows if row.goes_over and not row.problem],
        "back": _list_url(data["resource_class"], data["name"]),
    })


def _names(outcomes):
    names = [o.provider_name for o in outcomes[:NAMES_IN_MESSAGE]]
    more = len(outcomes) - len(names)
    return ", ".join(names) + (f" and {more} more" if more else "")


@staff_member_required
@require_POST
def bulk_apply(request):
    form = bulk_forms.BulkApplyForm(request.POST)
    if not form.is_valid():
        problems = [error for errors in form.errors.values() for error in errors]
        messages.error(request, "Nothing applied: " + " ".join(problems))
        return redirect("ui:bulk")
    data = form.cleaned_data
    changes = form.changes()
    outcomes = inventory_bulk.inventories_bulk_update(
        resource_class=data["resource_class"], targets=data["target"], changes=changes)
    what = ", ".join(f"{field} {value}" for field, value in changes.items())
    applied = [o for o in outcomes if o.status == inventory_bulk.APPLIED]
    if applied:
        messages.success(request, f"Set {data['resource_class']} {what} on {len(applied)} "
                                  f"provider(s): {_names(applied)}.")
    for outcome in outcomes:
        if outcome.status == inventory_bulk.CONFLICT:
            messages.error(request, (
                f"Conflict: {outcome.provider_name} was changed by someone else since the "
                f"preview ({outcome.message}); not applied. Its current values are shown "
                "below: preview again to apply to it."))
        elif outcome.status == inventory_bulk.REFUSED:
            messages.error(request, f"Not applied to {outcome.provider_name}: {outcome.message}")
    return redirect(_list_url(data["resource_class"], data["name"]))
