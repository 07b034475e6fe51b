"""Revert a change log entry from the operator pages (a bulk edit's batch is reverted
from its own page, console.providers.bulk). A revert that removes or lowers allocations
frees capacity others can be scheduled into at once: it asks first, before -> after.

The entry's page (a provider's or consumer's) posts here with `next`, its own address;
the revert is checked against the generation the entry left (allocations.reverts,
providers.services.reverts) and the outcome is shown there as a message.
"""
from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from providers.models import ChangeRecord, ResourceProvider
from console.door import SHOW_PROVIDER, UPDATE_ALLOCATIONS, UPDATE_INVENTORY, door
from allocations import reverts
from console.consumers.consumers import _named
from foundation.domain_errors import DomainError, error_message


def _next(request):
    """The posted `next` when it is a path of this site, else "". A path only: redirect()
    would take another word for the name of a view (next=abc was a 500)."""
    target = request.POST.get("next", "")
    if target.startswith("/") and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return ""


def _back(request, fallback="ui:dashboard"):
    return redirect(_next(request) or fallback)


def revert_rule(request, record_id):
    """A revert writes what the entry changed: a provider's inventories, or a consumer's
    allocations (allocations.reverts); an entry of another kind is refused by the
    service, after the strictest of the two."""
    kind = ChangeRecord.objects.filter(id=record_id).values_list("kind", flat=True).first()
    return UPDATE_INVENTORY if kind == ChangeRecord.KIND_PROVIDER else UPDATE_ALLOCATIONS


@door(read=SHOW_PROVIDER, write=revert_rule)
@require_POST
def change_revert(request, record_id):
    record = ChangeRecord.objects.filter(id=record_id).first()
    freed = reverts.allocations_freed(record) if record is not None else []
    if freed and request.POST.get("confirm") != "yes":
        names = dict(ResourceProvider.objects.filter(uuid__in={rp for rp, *_ in freed})
                     .values_list("uuid", "name"))
        return render(request, "ui/confirm_revert.html", {
            "record": record, "back": _next(request) or reverse("ui:dashboard"),
            "repost": [("next", _next(request))],
            "lines": [(names.get(rp, rp), rc, now, then) for rp, rc, now, then in freed]})
    try:
        record = reverts.change_revert(record_id=record_id)
    except DomainError as exc:
        messages.error(request, _named(f"Not reverted: {error_message(exc)}"))
    else:
        messages.success(request, _named(
            f"Reverted change {record.id} ({record.action} of {record.entity}, "
            f"{record.created_at:%Y-%m-%d %H:%M:%S} UTC)."))
    return _back(request)
