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
from html import escape  # the standard library's: Django's own adds lazy-string overhead
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from providers import bulk_forms
from providers.selectors import bulk as selectors
from providers.services import inventory_bulk

NAMES_IN_MESSAGE = 20  # providers named in the "applied" message; the rest are counted


def _list_url(resource_class, name):
    query = {"resource_class": resource_class}
    if name:
        query["name"] = name
    return f"{reverse('ui:bulk')}?{urlencode(query)}"


# The tables of these pages have a row per provider, a thousand and more: their rows are
# built here, several times faster than the template language (or format_html) for this
# many rows. Every text value goes through escape(); numbers need none.

LIST_ROW = (
    '<tr data-provider="{name}"{over_row}>'
    '<td><input type="checkbox" name="provider" value="{uuid}" aria-label="{name}"{checked}></td>'
    '<td><a href="{base}{uuid}/">{name}</a></td><td class="num">{total}</td>'
    '<td class="num">{reserved}</td><td class="num">{ratio}</td><td class="num">{used}</td>'
    '<td class="num">{capacity}{over_flag}</td><td class="num">{generation}</td></tr>')
PREVIEW_ROW = (
    '<tr data-provider="{name}" class="{outcome}"><td><a href="{base}{uuid}/">{name}</a></td>'
    '<td class="num">{reserved}</td><td class="num">{ratio}</td><td class="num">{used}</td>'
    '<td class="num">{capacity}</td><td class="outcome">{explained}</td></tr>')
OVER_ROW = ' class="flag-over"'
OVER_FLAG = ' <span class="flag over">over</span>'
CHECKED = " checked"


def _provider_base():
    """The provider page's URL without the uuid (one reverse() instead of one per row)."""
    return reverse("ui:provider", args=["-"])[:-2]


def _list_rows(rows, ticked):
    """The <tr>s of step 1's table; `ticked`: uuids to tick, None for all."""
    base = escape(_provider_base())
    return mark_safe("\n".join(LIST_ROW.format(
        name=escape(u.provider_name), uuid=escape(u.provider_uuid), base=base,
        checked=CHECKED if ticked is None or u.provider_uuid in ticked else "",
        total=u.total, reserved=u.reserved, ratio=u.allocation_ratio, used=u.used,
        capacity=u.usable, generation=u.provider_generation,
        over_row=OVER_ROW if u.over_capacity else "",
        over_flag=OVER_FLAG if u.over_capacity else "") for u in rows))


def _change(before, after):
    """`before`, or `before → after` with the new value in bold (numbers)."""
    if before == after:
        return str(before)
    return f"{before} → <strong>{after}</strong>"


def _outcome(row, rc):
    """(css class, explanation HTML) of one preview row."""
    if row.problem:
        return "refused", f'<span class="flag over">refused</span> {escape(row.problem)}'
    if row.goes_over:
        holders = "".join(f'<li><span class="mono">{escape(consumer)}</span>: '
                          f'{escape(rc)}={used}</li>' for consumer, used in row.holders)
        return "goes-over", (
            f'<span class="flag over">goes over capacity</span> {row.before.used} allocated '
            f'&gt; {row.after.usable}; it takes no new {escape(rc)} until usage drops. '
            f'Held by:<ul class="holders">{holders}</ul>')
    if row.after.over_capacity:
        return "stays-over", '<span class="flag over">stays over capacity</span>'
    if not row.changed:
        return "unchanged", '<span class="muted">unchanged</span>'
    return "ok", '<span class="flag ok">ok</span>'


def _preview_rows(rows, rc):
    """The <tr>s of the preview table."""
    base = escape(_provider_base())

    def html(row):
        before, after = row.before, row.after
        outcome, explained = _outcome(row, rc)
        return PREVIEW_ROW.format(
            name=escape(before.provider_name), uuid=escape(before.provider_uuid), base=base,
            reserved=_change(before.reserved, after.reserved),
            ratio=_change(before.allocation_ratio, after.allocation_ratio),
            used=before.used, capacity=_change(before.usable, after.usable),
            outcome=outcome, explained=explained)

    return mark_safe("\n".join(html(row) for row in rows))


def _target_inputs(rows):
    """The apply form's hidden "<uuid>:<generation>" of every row the service would take."""
    return mark_safe("".join(f'<input type="hidden" name="target" value="{escape(row.target)}">'
                             for row in rows if not row.problem))


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
        "form": form, "change_form": change_form, "rows": rows,
        "rows_html": _list_rows(rows, ticked), "ticked": ticked,
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
        "form": form, "rows": rows, "changes": form.changes(),
        "rows_html": _preview_rows(rows, data["resource_class"]),
        "applicable": [row for row in rows if not row.problem],
        "targets": _target_inputs(rows),
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
