"""Consumer pages of the operator UI: the consumers list, one consumer's allocations,
and its writes: move one allocation (through the move picker,
console.consumers.move_targets), remove one allocation, remove them all.

Each write calls one service with the generations the page was rendered with, so a
concurrent change shows up as a conflict message; refusals name providers by name.
"""
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.door import DELETE_ALLOCATIONS, LIST_ALLOCATIONS, UPDATE_ALLOCATIONS, door
from allocations import edits, reverts, selectors
from console.consumers.forms import (
    AddAllocationForm, ConsumerFilterForm, MoveAllocationForm, MoveTargetSearchForm, RemoveAllocationForm,
    RemoveAllocationsForm,
)
from console.consumers import workload
from console.consumers.move_targets import is_related, move_choice, name_roots
from foundation.domain_errors import ConcurrentUpdate, DomainError, error_message
from foundation.uuids import UUIDS_IN_TEXT
from providers.models import ChangeRecord, ResourceProvider
from console.providers.change_log import change_log_section

CONSUMERS_PER_PAGE = 50
REFUSED_SHOWN = 50   # providers matching the move picker's search that do not fit


@door(read=LIST_ALLOCATIONS)
@require_GET
def consumer_list(request):
    """Consumers by project / user / type (the usages filters) or uuid; paginated."""
    form = ConsumerFilterForm(request.GET or None)
    valid = form.is_valid() if form.is_bound else True
    consumers = selectors.consumer_list(
        filters=form.cleaned_filters(),
        query=form.cleaned_data.get("q", "") if form.is_bound and valid else "",
        root_id=form.cleaned_data.get("host") if form.is_bound and valid else None)
    if not valid:
        consumers = consumers.none()
    page = Paginator(consumers, CONSUMERS_PER_PAGE).get_page(request.GET.get("page"))
    holdings = selectors.consumer_holdings(consumer_ids=[c.id for c in page.object_list])
    kept = [(k, v) for k, v in request.GET.items() if k != "page" and v]
    return render(request, "ui/consumers.html", {
        "form": form, "page": page, "page_query": urlencode(kept),
        "rows": [{"consumer": c, "holdings": holdings.get(c.id, [])} for c in page.object_list],
    })


@door(read=LIST_ALLOCATIONS)
@require_GET
def consumer_detail(request, uuid):
    return _render_consumer(request, uuid)


def _render_consumer(request, uuid, *, bound_form=None, confirm_remove=None,
                     confirm_remove_one=None, status=200):
    """The consumer page: its allocations across providers, each with a link to the move
    picker and a remove button, the remove-all form, and its change log. A consumer
    that no longer exists but has a history shows that. confirm_remove_one: the
    (provider uuid, class) whose removal is to be confirmed."""
    consumer = selectors.consumer_get(uuid=uuid)
    log = change_log_section(request, kind=ChangeRecord.KIND_CONSUMER, entity=uuid,
                             revertible=reverts.revertible)
    if consumer is None and not log["recorded"]:
        raise Http404(f"No consumer with uuid {uuid}")
    rows = selectors.consumer_allocation_rows(consumer_id=consumer.id) if consumer else []
    picker = reverse("ui:consumer-move-target", args=[uuid])
    allocations = [{
        "allocation": a,
        "move_url": picker + "?" + urlencode({"provider": a.provider.uuid,
                                              "resource_class": a.resource_class.name}),
        "confirm_remove": confirm_remove_one == (a.provider.uuid, a.resource_class.name),
    } for a in rows]
    hosts = (ResourceProvider.objects.filter(id__in={a.provider.root_id for a in rows})
             .order_by("name").values("uuid", "name")) if rows else []
    return render(request, "ui/consumer.html", {
        "uuid": uuid,
        "consumer": consumer,
        "allocations": allocations,
        "hosts": hosts,
        "add_form": bound_form if isinstance(bound_form, AddAllocationForm) else AddAllocationForm(
            initial={"consumer_generation": consumer.generation if consumer else 0}),
        "providers": len({a.provider_id for a in rows}),
        "bound_form": bound_form,
        "confirm_remove": confirm_remove,
        "log": log,
    }, status=status)


def _named(message):
    """The service's message with the provider uuids in it replaced by the names."""
    uuids = set(UUIDS_IN_TEXT.findall(message))
    names = dict(ResourceProvider.objects.filter(uuid__in=uuids).values_list("uuid", "name"))
    for rp_uuid, name in names.items():
        message = message.replace(rp_uuid, name)
    return message


def _done(request, uuid, message):
    """Say what a consumer page write did, then show the consumer again."""
    messages.success(request, _named(message))
    return redirect("ui:consumer", uuid=uuid)


def _refused(request, uuid, exc, what):
    """Show a service's refusal of a consumer page write, then reload the page."""
    text = _named(error_message(exc))
    if isinstance(exc, ConcurrentUpdate):
        messages.error(request, (
            f"Not {what}: consumer {uuid} or one of its providers was changed by someone "
            f"else since this page was loaded ({text}). The page now shows the current "
            "state; please review and try again."))
    else:
        messages.error(request, f"Not {what}: {text}")
    if not selectors.consumer_known(uuid=uuid):  # its page would be a 404
        return redirect("ui:consumers")
    return redirect("ui:consumer", uuid=uuid)


def _held(uuid):
    """(consumer, its allocations with provider and class loaded); Http404 if none."""
    consumer = selectors.consumer_get(uuid=uuid)
    if consumer is None:
        raise Http404(f"Consumer {uuid} holds no allocations")
    return consumer, selectors.consumer_allocation_rows(consumer_id=consumer.id)


@door(read=LIST_ALLOCATIONS)
@require_GET
def consumer_move_target(request, uuid):
    """The move picker of one allocation (?provider=<uuid>&resource_class=<name>): the
    providers it fits on, searchable by name, a page at a time, with their free room;
    those matching the search that do not fit, with why; the trees where the
    consumer holds something else (a move elsewhere asks to confirm)."""
    consumer, held = _held(uuid)
    form = MoveTargetSearchForm(request.GET)
    if not form.is_valid():
        raise Http404("Choose an allocation of this consumer to move")
    data = form.cleaned_data
    given = data["provider"].strip()
    allocation = next((a for a in held if given in (a.provider.uuid, a.provider.name)
                       and a.resource_class.name == data["resource_class"]), None)
    if allocation is None:
        messages.error(request, f"Consumer {uuid} holds no {data['resource_class']} on "
                                f"{_named(given)}{_held_there(held, given)}.")
        return redirect("ui:consumer", uuid=uuid)
    source_root = allocation.provider.root_id
    # the source tree's traits and aggregates: read first only when they filter
    source = workload.tree_memberships([source_root])[source_root] if data["same"] else None
    narrow = (workload.has_everything_q(source, root="provider__root_id")
              if data["same"] else None)
    choice = move_choice(allocation=allocation, held=held, query=data["q"],
                         page=request.GET.get("page"), refused_shown=REFUSED_SHOWN,
                         narrow=narrow)
    kept = [(k, v) for k, v in request.GET.items() if k != "page" and v]
    name_roots([*choice.page.object_list, *choice.refused])
    trees = workload.tree_memberships({source_root, *(t.root_id for t in choice.page.object_list)})
    source = trees[source_root]
    for target in choice.page.object_list:
        target.difference = workload.difference(source, trees[target.root_id])
    return render(request, "ui/consumer_move.html", {
        "uuid": uuid, "consumer": consumer, "allocation": allocation, "form": form,
        "choice": choice, "page": choice.page, "page_query": urlencode(kept),
        "source_tree": source,
        "refused": choice.refused, "refused_more": choice.refused_count - len(choice.refused),
        "move_url": reverse("ui:consumer-move", args=[uuid]),
        "move_fields": [("source", allocation.provider.uuid),
                        ("source_generation", allocation.provider.generation),
                        ("resource_class", allocation.resource_class.name)],
        "why_not_query": urlencode({
            "q": f"resources={allocation.resource_class.name}:{allocation.used}",
            "version": "1.39"}),
    })


def _held_there(held, given):
    """What the consumer does hold on the provider named or with the uuid `given`
    (", only MEMORY_MB=2,048"), else " (any more)": a stale link (the picker's refusal)."""
    there = [f"{a.resource_class.name}={a.used:,}" for a in held
             if given in (a.provider.uuid, a.provider.name)]
    return f", only {', '.join(there)}" if there else " (any more)"


@door(read=LIST_ALLOCATIONS, write=UPDATE_ALLOCATIONS)
@require_POST
def consumer_move(request, uuid):
    """Move one allocation to another provider: edits.allocation_move, checked
    against the generations of the consumer and both providers shown on the page. A
    target in a tree where the consumer holds nothing else needs `unrelated_ok`."""
    form = MoveAllocationForm(request.POST)
    if not form.is_valid():
        return _render_consumer(request, uuid, bound_form=form, status=400)
    data = form.cleaned_data
    target_uuid, target_generation = data["target"]
    if not data["unrelated_ok"]:
        unrelated = _unrelated_target(uuid, data["source"], data["resource_class"], target_uuid)
        if unrelated:
            messages.error(request, unrelated)
            return redirect(reverse("ui:consumer-move-target", args=[uuid]) + "?" + urlencode(
                {"provider": data["source"], "resource_class": data["resource_class"]}))
    try:
        amount = edits.allocation_move(
            consumer_uuid=uuid, resource_class=data["resource_class"],
            source_uuid=data["source"], target_uuid=target_uuid,
            consumer_generation=data["consumer_generation"],
            source_generation=data["source_generation"], target_generation=target_generation)
    except DomainError as exc:
        return _refused(request, uuid, exc, "moved")
    return _done(request, uuid, (
        f"Moved {data['resource_class']}={amount} of consumer {uuid} from {data['source']} "
        f"to {target_uuid}."))


def _unrelated_target(uuid, source, resource_class, target_uuid):
    """The refusal to show when the target is in a tree unrelated to the consumer's other
    allocations (see console.consumers.move_targets), else None (also when the move will be
    refused for another reason: the service says why)."""
    consumer = selectors.consumer_get(uuid=uuid)
    target_id = ResourceProvider.objects.filter(uuid=target_uuid).values_list(
        "id", flat=True).first()
    if consumer is None or target_id is None:
        return None
    held = selectors.consumer_allocation_rows(consumer_id=consumer.id)
    allocation = next((a for a in held if a.provider.uuid == source
                       and a.resource_class.name == resource_class), None)
    if allocation is None or is_related(allocation=allocation, held=held,
                                        target_id=target_id):
        return None
    return _named(f"Not moved: {target_uuid} is in a tree where consumer {uuid} holds nothing "
                  "else; tick \"move to another tree\" to move it there anyway.")


@door(read=LIST_ALLOCATIONS, write=UPDATE_ALLOCATIONS)
@require_POST
def consumer_remove_one(request, uuid):
    """Remove one allocation (a class on a provider) after a confirmation, checked
    against the consumer and provider generations shown on the page."""
    form = RemoveAllocationForm(request.POST)
    if not form.is_valid():
        return _render_consumer(request, uuid, bound_form=form, status=400)
    data = form.cleaned_data
    if not data["confirm"]:
        return _render_consumer(request, uuid,
                                confirm_remove_one=(data["provider"], data["resource_class"]))
    try:
        amount = edits.allocation_remove(
            consumer_uuid=uuid, resource_class=data["resource_class"],
            provider_uuid=data["provider"], consumer_generation=data["consumer_generation"],
            provider_generation=data["provider_generation"])
    except DomainError as exc:
        return _refused(request, uuid, exc, "removed")
    gone = "" if selectors.consumer_get(uuid=uuid) else (
        " That was its last allocation: the consumer no longer exists.")
    return _done(request, uuid, (
        f"Removed {data['resource_class']}={amount} of consumer {uuid} from "
        f"{data['provider']}.{gone}"))


@door(read=LIST_ALLOCATIONS, write=DELETE_ALLOCATIONS)
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
        edits.consumer_allocations_remove(consumer_uuid=uuid, generation=generation)
    except DomainError as exc:
        return _refused(request, uuid, exc, "removed")
    messages.success(request, f"Removed every allocation of consumer {uuid}; the consumer "
                              "no longer exists.")
    return redirect("ui:consumer", uuid=uuid)
