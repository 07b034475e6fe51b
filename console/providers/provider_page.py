"""One provider's page of the operator UI (/ui/providers/<uuid>/).

Shows the provider's inventories with usage against capacity, its whole tree's usage and
consumers (console.providers.host), traits, aggregates, children and change log, in a fixed
number of queries.
Every write goes through the same services as the API (inventories, traits,
aggregates) with the provider generation the page was rendered with, so a
concurrent change shows up as a conflict message.

Imports go providers <- allocations: usage and allocations are read through
the reverse relation ``ResourceProvider.allocations``, never the model.
"""
from urllib.parse import urlencode

from django.contrib import messages
from django.db.models import Sum
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from console.door import (
    DELETE_INVENTORY,
    SHOW_PROVIDER,
    UPDATE_AGGREGATES,
    UPDATE_INVENTORY,
    UPDATE_PROVIDER_TRAITS,
    door,
)
from foundation.domain_errors import ConcurrentUpdate, DomainError, error_message
from providers.models import ChangeRecord, ProviderAggregate, ProviderTrait, ResourceProvider
from providers.rules import INVENTORY_DEFAULTS, INVENTORY_FIELDS
from allocations.models import Allocation
from allocations.usage import inventories_below_usage, used_per_provider_class
from console.providers.lookup import provider_or_404
from providers.services.dry_run import refusal
from providers.services.reverts import inventories_revertible
from console.providers import forms, host
from console.providers.change_log import change_log_section
from console.links import row_url
from console.providers.tree_layout import usage_row

CONSUMERS_PAGE = "consumers-page"   # the query parameter of the consumers' pages
CONSUMERS_SORT = "consumers-sort"   # ... and of their order (console.providers.host.SORTS)


def _inventory_rows(inventories, usage):
    """Inventory rows with used/capacity for display; `usage` maps (rp_id, rc_id) -> used."""
    rows = [usage_row(inv, usage.get((inv.provider_id, inv.resource_class_id), 0))
            for inv in inventories]
    rows.sort(key=lambda r: r["rc"])
    return rows


def _provider_context(provider, consumers_page=None, sort="consumer"):
    """Everything the provider page shows (a fixed number of queries)."""
    children = list(provider.children.order_by("name"))
    inventories = list(provider.inventories.select_related("resource_class"))
    usage = used_per_provider_class(ResourceProvider.objects.filter(pk=provider.pk))
    traits = list(ProviderTrait.objects.filter(provider=provider)
                  .values_list("trait__name", flat=True).order_by("trait__name"))
    aggregates = list(ProviderAggregate.objects.filter(provider=provider)
                      .values_list("aggregate__uuid", flat=True).order_by("aggregate__uuid"))
    tree = host.tree_usage(provider)
    sort = host.clean_sort(sort, {row.resource_class for row in tree or []}
                           | {inv.resource_class.name for inv in inventories})
    page, consumers = host.consumers_page(provider, consumers_page, sort)
    return {
        "provider": provider,
        "children": children,
        "inventory_rows": _inventory_rows(inventories, usage),
        "traits": traits,
        "aggregates": aggregates,
        "consumers": consumers,
        "consumer_page": page,
        "consumer_sort": sort,
        "tree_usage": tree,
        "own_classes": {inv.resource_class.name for inv in inventories},
        "consumer_url": row_url("ui:consumer"),
        "provider_url": row_url("ui:provider"),
    }


@door(read=SHOW_PROVIDER)
@require_GET
def provider_detail(request, uuid):
    provider = provider_or_404(uuid)
    return _render_provider(request, provider, edit=request.GET.get("edit"))


def _render_provider(request, provider, bound_forms=None, status=200, edit=None, confirm=None,
                     refused=None, traits_confirm=None):
    """The provider page; `bound_forms` replaces the blank form of one section after an error.

    `edit` names an inventory class whose values prefill the inventory form;
    `confirm` is an inventory change waiting for confirmation (_inventory_confirmation);
    `refused` a refused inventory delete ({rc, message, holders}), shown at the top;
    `traits_confirm` a trait set that removes traits, waiting for confirmation.
    """
    context = _provider_context(provider, request.GET.get(CONSUMERS_PAGE),
                                request.GET.get(CONSUMERS_SORT, "consumer"))
    context["consumers_page_query"] = urlencode(
        [(key, value) for key, value in request.GET.items() if key != CONSUMERS_PAGE])
    context["consumers_sort_query"] = urlencode(
        [(key, value) for key, value in request.GET.items()
         if key not in (CONSUMERS_PAGE, CONSUMERS_SORT)])
    context["confirm"] = confirm
    context["refused"] = refused
    context["traits_confirm"] = traits_confirm
    context["log"] = change_log_section(request, kind=ChangeRecord.KIND_PROVIDER,
                                        entity=provider.uuid, revertible=inventories_revertible)
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
    context["defaults"] = INVENTORY_DEFAULTS
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
    service's message is a form error. A refused inventory delete is no form's
    error (it came from a row's button): it is shown at the top with the
    consumers holding the class. A generation conflict instead reloads the page
    with a message, since the values shown are no longer current.
    """
    if form.is_valid():
        try:
            summary = form.save(provider)
        except DomainError as exc:
            # The service bumped the in-memory generation before it refused; the
            # database kept the old one, which the re-rendered forms must carry.
            provider.refresh_from_db()
            if isinstance(exc, ConcurrentUpdate):
                messages.error(request, (
                    f"Provider {provider.name} was changed by someone else since this page "
                    f"was loaded (conflict: {provider_refusal(exc, provider)}). The page now shows its "
                    "current state; please review and try again."))
                return redirect("ui:provider", uuid=provider.uuid)
            if _is_delete(form):
                rc = form.cleaned_data["resource_class"]
                return _render_provider(request, provider, status=400, refused={
                    "rc": rc, "message": provider_refusal(exc, provider),
                    "holders": _holders(provider, rc)})
            form.add_error(None, provider_refusal(exc, provider))
        else:
            messages.success(request, summary)
            return redirect("ui:provider", uuid=provider.uuid)
    return _render_provider(request, provider, {form_name: form}, status=400)


def _is_delete(form):
    return isinstance(form, forms.InventoryForm) and form.cleaned_data["action"] == "delete"


def _holders(provider, rc):
    """[(consumer uuid, used)] of the allocations of class `rc` against `provider`."""
    return list(Allocation.objects.filter(provider=provider, resource_class__name=rc)
                .order_by("consumer__uuid").values_list("consumer__uuid", "used"))


# Each editable section of the provider page: its form class and context name.
SECTIONS = {
    "inventory": (forms.InventoryForm, "inventory_form"),  # add/update or delete one class
    "traits": (forms.TraitsForm, "traits_form"),
    "aggregates": (forms.AggregatesForm, "aggregates_form"),
}


def _inventory_confirmation(request, provider, form):
    """What a valid inventory change needs confirmed, or None to save it at once.

    A delete is always confirmed. An update that lowers the class's capacity is
    confirmed, showing before -> after for each field it changes; when the new
    capacity is below what is used (Placement accepts that: the provider is then over
    capacity and takes no new allocations of the class), the page also says so and
    lists the consumers holding the class here.
    """
    rc = form.cleaned_data["resource_class"]
    repost = [(name, value) for name in request.POST if name not in ("csrfmiddlewaretoken",)
              for value in request.POST.getlist(name)]
    if form.cleaned_data["action"] == "delete":
        return {"rc": rc, "delete": True, "repost": repost}
    change = form.change(provider)
    below = inventories_below_usage(provider, {rc: change.after})
    if not below and not change.capacity_drops:
        return None
    confirm = {"rc": rc, "delete": False, "repost": repost, "change": change, "below": bool(below)}
    if below:
        confirm.update(used=below[0].used, holders=below[0].holders)
    return confirm


def section_rule(request, uuid, section):
    """The API operation a section's form performs."""
    if section == "inventory":
        return DELETE_INVENTORY if request.POST.get("action") == "delete" else UPDATE_INVENTORY
    return {"traits": UPDATE_PROVIDER_TRAITS, "aggregates": UPDATE_AGGREGATES}[section]


@door(read=SHOW_PROVIDER, write=section_rule)
@require_http_methods(["GET", "POST"])
def provider_edit(request, uuid, section):
    """Save one section's form (SECTIONS) of the provider page.

    An inventory change that deletes a class or cuts capacity below usage is
    first shown for confirmation (the forms post to #confirm, so the browser
    shows it where the view is); the confirming POST carries `confirm`. A GET
    (the address bar after such a page, reloaded or bookmarked) is the provider page.
    """
    provider = provider_or_404(uuid)
    if request.method == "GET":
        return redirect("ui:provider", uuid=provider.uuid)
    form_class, form_name = SECTIONS[section]
    form = form_class(request.POST, provider=provider)
    if section == "inventory" and "confirm" not in request.POST and form.is_valid():
        confirm = _inventory_confirmation(request, provider, form)
        if confirm is not None and _service_accepts(form, provider):
            # A delete comes from a row's button: the add/update form stays blank.
            bound = {} if confirm["delete"] else {form_name: form}
            return _render_provider(request, provider, bound, confirm=confirm)
    if section == "traits" and "confirm" not in request.POST and form.is_valid():
        added, removed = form.difference(provider)
        if removed and _service_accepts(form, provider):
            repost = [(name, value) for name in request.POST if name != "csrfmiddlewaretoken"
                      for value in request.POST.getlist(name)]
            return _render_provider(request, provider, {form_name: form}, traits_confirm={
                "added": added, "removed": removed, "repost": repost})
    return _save_form(request, provider, form, form_name)



def _service_accepts(form, provider):
    """Whether the service would save the form (tried, then rolled back): a change
    it refuses is shown as its refusal, not offered for confirmation."""
    try:
        return refusal(lambda: form.save(provider)) is None
    finally:
        provider.refresh_from_db()
