"""Bulk edit of allocation ratios and reserved amounts (/ui/bulk/).

Three steps, no script, and a way back:

1. GET  /ui/bulk/?resource_class=VCPU&name=cn&aggregate=…&trait=…&tree=… — the
   providers with inventory of the class that match every filter given, 50 a page,
   none ticked; the change to make, for the ticked providers or for every matching
   provider (across pages);
2. POST /ui/bulk/preview — before -> after for each chosen provider: the new capacity,
   refusals the service would give, providers that would go over capacity with the
   consumers holding the class there; nothing is written;
3. POST /ui/bulk/apply — the change, provider by provider, with the generation each
   preview row was computed with (providers.services.inventory_bulk): a provider
   changed since the preview is reported as a conflict, the others are applied. The
   providers the preview said would go over capacity are written only when the
   operator accepts it; "apply only where it stays within capacity" leaves them out.
   The batch (the entries of that one request, one request id) is then shown at
   /ui/bulk/batch/<request id>/ with a one-click revert of the whole batch
   (providers.services.reverts.batch_revert).

Reads are a fixed number of queries (console.providers.bulk_reads).
"""
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.door import LIST_PROVIDERS, UPDATE_INVENTORY, door
from console.links import row_url
from console.providers import bulk_reads as selectors
from providers.services import inventory_bulk
from providers.services.reverts import batch_entries, batch_revert
from console.providers import bulk_forms
from console.providers.change_log import describe, provider_names

NAMES_IN_MESSAGE = 20   # providers named in the "applied" message; the rest are counted
PER_PAGE = 50           # providers listed a page
PREVIEW_SHOWN = 50     # preview rows shown that take the change without a problem
FLAGGED_SHOWN = 60     # ... and of those refused or over capacity (all are counted)


def _list_url(params):
    return f"{reverse('ui:bulk')}?{urlencode(params)}"


def _outcome(row):
    """The outcome of one preview row, a css class that console/templates/ui/bulk_preview.html
    explains."""
    if row.problem:
        return "refused"
    if row.goes_over:
        return "goes-over"
    if row.after.over_capacity:
        return "stays-over"
    return "ok" if row.changed else "unchanged"


def _render_list(request, form, change_form=None, ticked=(), status=200):
    """Step 1: the filters, a page of the matching providers and the change form."""
    page = rows = None
    why, skipped = {}, (0, [])
    if form.is_bound and form.is_valid():
        page = Paginator(selectors.usage_rows(form.matching()), PER_PAGE).get_page(
            request.GET.get("page"))
        rows = selectors.usages_of(page.object_list)
        hosts = form.hosts()
        why = selectors.why_included(rows, hosts)
        skipped = selectors.left_out(form.cleaned_data["resource_class"], hosts,
                                     form.cleaned_data["tree"])
    if change_form is None:
        initial = form.cleaned_data if form.is_bound and form.is_valid() else {}
        change_form = bulk_forms.BulkPreviewForm(initial=initial)
    kept = [(k, v) for k, v in (form.data.items() if form.is_bound else []) if k != "page" and v]
    return render(request, "ui/bulk.html", {
        "form": form, "change_form": change_form, "rows": rows, "page": page,
        "page_query": urlencode(kept), "ticked": set(ticked), "why": why,
        "left_out_count": skipped[0], "left_out": skipped[1],
        "provider_url": row_url("ui:provider"),
        "class_names": bulk_forms.class_names(),
    }, status=status)


@door(read=LIST_PROVIDERS)
@require_GET
def bulk_edit(request):
    return _render_list(request, bulk_forms.BulkFilterForm(request.GET or None))


@door(read=LIST_PROVIDERS, post_reads=True)
@require_POST
def bulk_preview(request):
    form = bulk_forms.BulkPreviewForm(request.POST)
    if not form.is_valid():
        filter_form = bulk_forms.BulkFilterForm(
            {name: request.POST.get(name, "")
             for name in ("resource_class", *bulk_forms.BulkFilterForm.FILTERS)})
        return _render_list(request, filter_form, change_form=form,
                            ticked=request.POST.getlist("provider"), status=400)
    data = form.cleaned_data
    rows = selectors.bulk_preview(resource_class=data["resource_class"],
                                  inventories=form.chosen(), changes=form.changes())
    outcomes = [(row, _outcome(row)) for row in rows]
    flagged = [pair for pair in outcomes if pair[1] in ("refused", "goes-over", "stays-over")]
    plain = [pair for pair in outcomes if pair[1] in ("ok", "unchanged")]
    return render(request, "ui/bulk_preview.html", {
        "form": form, "changes": form.changes(), "rows": rows,
        "outcomes": flagged[:FLAGGED_SHOWN] + plain[:PREVIEW_SHOWN],
        "not_shown": len(plain[PREVIEW_SHOWN:]), "flagged_not_shown": len(flagged[FLAGGED_SHOWN:]),
        "provider_url": row_url("ui:provider"),
        "applicable": [row for row in rows if not row.problem],
        "refused": [row for row in rows if row.problem],
        "going_over": [row for row in rows if row.goes_over and not row.problem],
        "filters": [(k, v) for k, v in form.filter_params().items() if k != "resource_class"],
        "back": _list_url(form.filter_params()),
    })


def _names(outcomes):
    names = [o.provider_name for o in outcomes[:NAMES_IN_MESSAGE]]
    more = len(outcomes) - len(names)
    return ", ".join(names) + (f" and {more} more" if more else "")


@door(read=LIST_PROVIDERS, write=UPDATE_INVENTORY)
@require_POST
def bulk_apply(request):
    form = bulk_forms.BulkApplyForm(request.POST)
    if not form.is_valid():
        problems = [error for errors in form.errors.values() for error in errors]
        messages.error(request, "Nothing applied: " + " ".join(problems))
        return redirect(_list_url(form.filter_params()) if form.data.get("resource_class")
                        else reverse("ui:bulk"))
    data = form.cleaned_data
    changes = form.changes()
    outcomes = inventory_bulk.inventories_bulk_update(
        resource_class=data["resource_class"], targets=data["target"], changes=changes)
    what = ", ".join(f"{field} {value}" for field, value in changes.items())
    applied = [o for o in outcomes if o.status == inventory_bulk.APPLIED]
    batch = getattr(request, "request_id", "")
    if applied:
        messages.success(request, f"Batch {batch}: set {data['resource_class']} {what} on "
                                  f"{len(applied)} provider(s): {_names(applied)}.")
    for outcome in outcomes:
        if outcome.status == inventory_bulk.CONFLICT:
            messages.error(request, (
                f"Conflict: {outcome.provider_name} was changed by someone else since the "
                f"preview ({outcome.message}); not applied. Preview again to apply to it."))
        elif outcome.status == inventory_bulk.REFUSED:
            messages.error(request, f"Not applied to {outcome.provider_name}: {outcome.message}")
    if applied and batch:
        return redirect("ui:bulk-batch", request_id=batch)
    return redirect(_list_url(form.filter_params()))


@door(read=LIST_PROVIDERS)
@require_GET
def bulk_batch(request, request_id):
    """One batch: the inventory entries one request wrote, before -> after, and its revert."""
    return render_batch(request, request_id, batch_entries(request_id), "ui/bulk_batch.html")


def render_batch(request, request_id, entries, template):
    """A batch's page: each change-log entry of it, before -> after; a 404 for none."""
    entries = list(entries)
    if not entries:
        raise Http404(f"No bulk edit batch {request_id}")
    names = provider_names(entries)
    return render(request, template, {
        "request_id": request_id,
        "rows": [{"entry": e, "name": names.get(e.entity, e.entity),
                  "lines": describe(e, names)} for e in entries],
        "provider_url": row_url("ui:provider"),
    })


@door(read=LIST_PROVIDERS, write=UPDATE_INVENTORY)
@require_POST
def bulk_batch_revert(request, request_id):
    """Revert a batch, provider by provider (each checked against the generation its
    entry left: a provider changed since is reported and left alone)."""
    outcomes = batch_revert(request_id=request_id)
    done = [o for o in outcomes if o.status == inventory_bulk.APPLIED]
    if not outcomes:
        messages.error(request, f"Batch {request_id} changed no inventory: nothing to revert.")
    if done:
        messages.success(request, f"Batch {request_id} reverted on {len(done)} provider(s): "
                                  f"{_names(done)}.")
    for outcome in outcomes:
        if outcome.status != inventory_bulk.APPLIED:
            messages.error(request, f"{outcome.provider_name} not reverted: {outcome.message}")
    return redirect("ui:bulk-batch", request_id=request_id)
