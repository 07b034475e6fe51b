"""The consumer page's whole-host move and its "add an allocation" (operator UI).

Move a whole host: everything the consumer holds in one provider tree goes to another
tree in one write (allocations.edits.consumer_move_tree). The picker lists the hosts
whose trees have inventory of every class held, most free room first (the order of
the single-allocation picker: allocations.tree_moves.target_hosts), 25 a page,
searchable, or only those with every trait and aggregate of the source tree; each with
how its traits and aggregates differ from the source's (console.consumers.workload) and
where each allocation would go or why it does not fit (allocations.tree_moves:
two queries for the page's trees); "Move here" posts the generations shown, so the
plan written is the plan the operator saw, or nothing is written.
"""
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_GET, require_POST

from console.door import LIST_ALLOCATIONS, UPDATE_ALLOCATIONS, door
from allocations import edits, selectors, tree_moves
from console.consumers import workload
from console.consumers.consumers import _done, _refused, _render_consumer
from console.consumers.forms import AddAllocationForm, MoveTreeForm, MoveTreeSearchForm
from foundation.domain_errors import DomainError
from foundation.uuids import canonical_uuid_or_none
from providers.models import ResourceProvider

HOSTS_PER_PAGE = 25


@door(read=LIST_ALLOCATIONS)
@require_GET
def consumer_move_tree_page(request, uuid):
    """The whole-host move picker (?root=<name or uuid of the host, or of any provider
    of its tree>&q=<part of a host name>)."""
    consumer = selectors.consumer_get(uuid=uuid)
    if consumer is None:
        raise Http404(f"Consumer {uuid} holds no allocations")
    form = MoveTreeSearchForm(request.GET)
    if not form.is_valid():
        messages.error(request, "Not shown: " + " ".join(
            error for errors in form.errors.values() for error in errors))
        return redirect("ui:consumer", uuid=uuid)
    source = form.cleaned_data["root"]
    held = tree_moves.held_in_tree(consumer_id=consumer.id, root_id=source.id)
    if not held:
        names = selectors.held_root_names(consumer_id=consumer.id)
        messages.error(request, f"Consumer {uuid} holds nothing in the tree of {source.name}; "
                                f"it holds allocations in the tree{pluralize(names)} of "
                                f"{', '.join(names)}.")
        return redirect("ui:consumer", uuid=uuid)
    classes = {h.resource_class for h in held}
    amounts = {}
    for h in held:
        amounts[h.resource_class] = max(amounts.get(h.resource_class, 0), h.amount)
    same = form.cleaned_data["same"]
    # the source tree's traits and aggregates: read first only when they filter
    source_tree = workload.tree_memberships([source.id])[source.id] if same else None
    hosts = tree_moves.target_hosts(
        classes=classes, exclude_root_id=source.id, query=form.cleaned_data["q"].strip(),
        amounts=amounts,
        narrow=workload.has_everything_q(source_tree, root="id")
        if same else None)
    page = Paginator(hosts, HOSTS_PER_PAGE).get_page(request.GET.get("page"))
    roots = list(page.object_list)
    trees = tree_moves.tree_inventories(root_ids=[r.id for r in roots] + [source.id],
                                        classes=classes)
    source_generations = _generations(trees.get(source.id, []), held)
    memberships = workload.tree_memberships([source.id, *(r.id for r in roots)])
    source_tree = memberships[source.id]
    rows = []
    for root in roots:
        plan = tree_moves.plan_tree_move(held, trees.get(root.id, []))
        generations = {**source_generations, **_generations(trees.get(root.id, []))}
        rows.append({"root": root, "plan": plan,
                     "difference": workload.difference(source_tree, memberships[root.id]),
                     "move_fields": [
            ("target_root", root.uuid),
            ("generations", " ".join(f"{k}:{v}" for k, v in generations.items()))]})
    kept = [(k, v) for k, v in request.GET.items() if k != "page" and v]
    return render(request, "ui/consumer_move_tree.html", {
        "uuid": uuid, "consumer": consumer, "source": source, "held": held, "form": form,
        "page": page, "rows": rows, "page_query": urlencode(kept),
        "source_tree": source_tree,
        "move_url": reverse("ui:consumer-move-tree", args=[uuid]),
        "move_fields": [("source_root", source.uuid)],
        "fitting": sum(row["plan"].fits for row in rows),
    })


def _generations(inventories, held=()):
    """{provider uuid: generation} of a tree's inventories (and the source providers)."""
    generations = {inv.provider_uuid: inv.provider_generation for inv in inventories}
    missing = {h.provider_uuid for h in held} - set(generations)
    if missing:
        generations.update(ResourceProvider.objects.filter(uuid__in=missing)
                           .values_list("uuid", "generation"))
    return generations


@door(read=LIST_ALLOCATIONS, write=UPDATE_ALLOCATIONS)
@require_POST
def consumer_move_tree(request, uuid):
    """Move everything the consumer holds on one host to another, in one checked write."""
    form = MoveTreeForm(request.POST)
    if not form.is_valid():
        return _render_consumer(request, uuid, bound_form=form, status=400)
    data = form.cleaned_data
    try:
        plan = edits.consumer_move_tree(
            consumer_uuid=uuid, source_root_uuid=data["source_root"],
            target_root_uuid=data["target_root"],
            consumer_generation=data["consumer_generation"],
            provider_generations=data["generations"])
    except DomainError as exc:
        return _refused(request, uuid, exc, "moved")
    moved = ", ".join(f"{held.resource_class}={held.amount:,} {held.provider_uuid} → "
                      f"{target.provider_uuid}" for held, target in plan.steps)
    return _done(request, uuid, (
        f"Moved consumer {uuid} from {data['source_root']} to {data['target_root']} in one "
        f"write: {moved}."))


@door(read=LIST_ALLOCATIONS, write=UPDATE_ALLOCATIONS)
@require_POST
def consumer_add(request, uuid):
    """Add an allocation (a class and amount on a provider named by name or uuid)."""
    form = AddAllocationForm(request.POST)
    provider = None
    if form.is_valid():
        given = form.cleaned_data["provider"].strip()
        canonical = canonical_uuid_or_none(given)
        lookup = {"uuid": canonical} if canonical else {"name": given}
        provider = ResourceProvider.objects.filter(**lookup).first()
        if provider is None:
            form.add_error("provider", f"No resource provider is named or has the uuid "
                                       f"“{given}”.")
    if not form.is_valid():
        return _render_consumer(request, uuid, bound_form=form, status=400)
    data = form.cleaned_data
    try:
        edits.allocation_add(
            consumer_uuid=uuid, provider_uuid=provider.uuid,
            resource_class=data["resource_class"], amount=data["amount"],
            consumer_generation=data["consumer_generation"])
    except DomainError as exc:
        return _refused(request, uuid, exc, "added")
    messages.success(request, f"Added {data['resource_class']}={data['amount']:,} on "
                              f"{provider.name} to consumer {uuid}.")
    return redirect("ui:consumer", uuid=uuid)
