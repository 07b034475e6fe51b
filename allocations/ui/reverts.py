"""Revert a change log entry, or a batch of them, from the operator pages (one click).

The entry's page (a provider's or consumer's) posts here with `next`, its own address;
the revert is checked against the generation the entry left (allocations.reverts,
providers.services.reverts) and the outcome is shown there as a message.
"""
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from allocations import reverts
from allocations.ui.consumers import _named
from foundation.domain_errors import DomainError, error_message
from providers.services.inventory_bulk import APPLIED
from providers.services.reverts import batch_revert


def _back(request, fallback="ui:dashboard"):
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                       require_https=request.is_secure()):
        return redirect(target)
    return redirect(fallback)


@staff_member_required
@require_POST
def change_revert(request, record_id):
    try:
        record = reverts.change_revert(record_id=record_id)
    except DomainError as exc:
        messages.error(request, _named(f"Not reverted: {error_message(exc)}"))
    else:
        messages.success(request, _named(
            f"Reverted change {record.id} ({record.action} of {record.entity}, "
            f"{record.created_at:%Y-%m-%d %H:%M:%S} UTC)."))
    return _back(request)


@staff_member_required
@require_POST
def batch_revert_view(request, request_id):
    outcomes = batch_revert(request_id=request_id)
    done = [o for o in outcomes if o.status == APPLIED]
    left = [o for o in outcomes if o.status != APPLIED]
    if not outcomes:
        messages.error(request, f"Batch {request_id} changed no inventory: nothing to revert.")
    if done:
        messages.success(request, f"Batch {request_id} reverted on {len(done)} provider"
                                  f"{'s' if len(done) != 1 else ''}.")
    for outcome in left:
        messages.error(request, f"{outcome.provider_name} not reverted: "
                                f"{_named(outcome.message)}")
    return _back(request, fallback="ui:bulk")
