"""Reads of the change log (providers.models.ChangeRecord), newest first."""
from django.db.models import Q

from providers.models import ChangeRecord


def change_list(*, kind, entity, action=None, actor=None, since=None, until=None):
    """One entity's entries, newest first, narrowed by the optional filters.

    actor: part of the actor (user id, ui:/admin:/command: login or name) or of the
    API caller's project id, case-insensitive. since / until: aware datetimes,
    since inclusive, until exclusive. Uses the (kind, entity, created_at) index.
    """
    entries = ChangeRecord.objects.filter(kind=kind, entity=entity)
    if action:
        entries = entries.filter(action=action)
    if actor:
        entries = entries.filter(Q(actor__icontains=actor) | Q(project_id__icontains=actor))
    if since is not None:
        entries = entries.filter(created_at__gte=since)
    if until is not None:
        entries = entries.filter(created_at__lt=until)
    return entries.order_by("-created_at", "-id")


def change_actions(*, kind, entity):
    """The actions recorded for one entity, sorted (the filter's choices)."""
    return sorted(ChangeRecord.objects.filter(kind=kind, entity=entity)
                  .order_by().values_list("action", flat=True).distinct())
