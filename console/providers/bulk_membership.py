"""Bulk edit of traits and aggregates (/ui/bulk/traits-aggregates/).

The same three steps and way back as the inventory bulk edit (console.providers.bulk):

1. GET  /ui/bulk/traits-aggregates/?name=cn&aggregate=…&trait=…&tree=… — the providers
   the filters select (the providers themselves: traits and aggregates sit on the
   provider they name), 50 a page, none ticked, and the change: traits to add or
   remove, or aggregates to join or leave;
2. POST …/preview — each chosen provider's traits or aggregates before -> after;
   nothing is written;
3. POST …/apply — provider by provider, with the generation each preview row was read
   at (providers.services.membership_bulk): a provider changed since is a conflict and
   left alone. The batch (one request id) is shown at …/batch/<request id>/ with a
   revert of the whole batch.
"""
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.door import (
    LIST_PROVIDERS, UPDATE_AGGREGATES, UPDATE_PROVIDER_TRAITS, allows, door,
)
from console.links import row_url
from console.providers import membership_forms as forms
from console.providers.bulk import _names, render_batch
from providers.services import membership_bulk
from providers.services.inventory_bulk import APPLIED, CONFLICT, REFUSED

PER_PAGE = 50
PREVIEW_SHOWN = 100     # changed rows shown in the preview (all are counted)


def _list_url(params):
    return f"{reverse('ui:bulk-membership')}?{urlencode(params)}"


def _apply_rule(request):
    return UPDATE_PROVIDER_TRAITS if forms.writes_traits(request.POST) else UPDATE_AGGREGATES


def _batch_rules(request_id):
    """The write rules reverting the batch needs: one per kind of entry in it (a batch
    of this page has one kind)."""
    actions = set(membership_bulk.membership_batch_entries(request_id)
                  .values_list("action", flat=True))
    return ([UPDATE_PROVIDER_TRAITS] if membership_bulk.TRAITS in actions else []) + (
        [UPDATE_AGGREGATES] if membership_bulk.AGGREGATES in actions else [])


def _revert_rule(request, request_id):
    return (_batch_rules(request_id) or [UPDATE_AGGREGATES])[0]


def _render_list(request, form, change_form=None, ticked=(), status=200):
    page = rows = None
    if form.is_bound and form.is_valid():
        page = Paginator(form.matching().order_by("name").values_list("id", flat=True),
                         PER_PAGE).get_page(request.GET.get("page"))
        ids = list(page.object_list)
        traits = membership_bulk.current_sets(membership_bulk.TRAITS, ids)
        aggregates = membership_bulk.current_sets(membership_bulk.AGGREGATES, ids)
        providers = form.matching().filter(id__in=ids).order_by("name").values(
            "id", "uuid", "name", "generation", "root__name", "parent_id")
        rows = [{**p, "traits": traits[p["id"]], "aggregates": aggregates[p["id"]]}
                for p in providers]
    if change_form is None:
        change_form = forms.MembershipPreviewForm()
    kept = [(k, v) for k, v in (form.data.items() if form.is_bound else []) if k != "page" and v]
    return render(request, "ui/bulk_membership.html", {
        "form": form, "change_form": change_form, "rows": rows, "page": page,
        "page_query": urlencode(kept), "ticked": set(ticked),
        "provider_url": row_url("ui:provider"),
    }, status=status)


@door(read=LIST_PROVIDERS)
@require_GET
def bulk_membership(request):
    return _render_list(request, forms.MembershipFilterForm(request.GET or {}))


@door(read=LIST_PROVIDERS, post_reads=True)
@require_POST
def bulk_membership_preview(request):
    form = forms.MembershipPreviewForm(request.POST)
    if not form.is_valid():
        filter_form = forms.MembershipFilterForm(
            {name: request.POST.get(name, "") for name in forms.MembershipFilterForm.FILTERS})
        return _render_list(request, filter_form, change_form=form,
                            ticked=request.POST.getlist("provider"), status=400)
    change = form.change()
    rows = membership_bulk.membership_preview(providers=form.chosen(), change=change)
    changed = [row for row in rows if row.changed]
    return render(request, "ui/bulk_membership_preview.html", {
        "form": form, "change": change, "rows": rows, "changed": changed,
        "shown": changed[:PREVIEW_SHOWN], "not_shown": len(changed[PREVIEW_SHOWN:]),
        "unchanged": len(rows) - len(changed),
        "filters": list(form.filter_params().items()),
        "back": _list_url(form.filter_params()),
        "provider_url": row_url("ui:provider"),
    })


@door(read=LIST_PROVIDERS, write=_apply_rule)
@require_POST
def bulk_membership_apply(request):
    form = forms.MembershipApplyForm(request.POST)
    if not form.is_valid():
        problems = [error for errors in form.errors.values() for error in errors]
        messages.error(request, "Nothing applied: " + " ".join(problems))
        return redirect(_list_url(form.filter_params()))
    change = form.change()
    outcomes = membership_bulk.membership_bulk_update(targets=form.cleaned_data["target"],
                                                      change=change)
    applied = [o for o in outcomes if o.status == APPLIED]
    batch = getattr(request, "request_id", "")
    if applied:
        messages.success(request, f"Batch {batch}: changed the {change.kind} of "
                                  f"{len(applied)} provider(s): {_names(applied)}.")
    else:
        messages.info(request, "No provider was changed.")
    for outcome in outcomes:
        if outcome.status == CONFLICT:
            messages.error(request, (
                f"Conflict: {outcome.provider_name} was changed by someone else since the "
                f"preview ({outcome.message}); not applied. Preview again to apply to it."))
        elif outcome.status == REFUSED:
            messages.error(request, f"Not applied to {outcome.provider_name}: {outcome.message}")
    if applied and batch:
        return redirect("ui:bulk-membership-batch", request_id=batch)
    return redirect(_list_url(form.filter_params()))


@door(read=LIST_PROVIDERS)
@require_GET
def bulk_membership_batch(request, request_id):
    """One batch: the trait or aggregate entries one request wrote, and its revert."""
    return render_batch(request, request_id, membership_bulk.membership_batch_entries(request_id),
                        "ui/bulk_membership_batch.html")


@door(read=LIST_PROVIDERS, write=_revert_rule)
@require_POST
def bulk_membership_batch_revert(request, request_id):
    """Revert a batch, provider by provider (a provider changed since is left alone)."""
    if not all(allows(request, rule, write=True) for rule in _batch_rules(request_id)):
        # a batch of both kinds (not one this page writes) needs both rules
        raise PermissionDenied("Policy does not allow reverting both traits and aggregates.")
    outcomes = membership_bulk.membership_batch_revert(request_id=request_id)
    done = [o for o in outcomes if o.status == APPLIED]
    if not outcomes:
        messages.error(request, f"Batch {request_id} changed no trait or aggregate: "
                                "nothing to revert.")
    if done:
        messages.success(request, f"Batch {request_id} reverted on {len(done)} provider(s): "
                                  f"{_names(done)}.")
    for outcome in outcomes:
        if outcome.status != APPLIED:
            messages.error(request, f"{outcome.provider_name} not reverted: {outcome.message}")
    return redirect("ui:bulk-membership-batch", request_id=request_id)
