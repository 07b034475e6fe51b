"""The change log section of the operator UI's provider and consumer pages.

change_log_section() reads one entity's entries (console.providers.change_log_reads),
filtered by action, actor and time range and paginated, in a fixed number of
queries (actions, count, page, provider names); describe() turns an entry's
before/after into readable lines, naming providers by name and linking
providers and consumers to their pages.
"""
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.core.paginator import Paginator
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from providers.models import ResourceProvider
from providers.rules import INVENTORY_FIELDS
from console.providers.change_log_reads import change_actions, change_list

PER_PAGE = 20
PREFIX = "log"  # query parameters log-action, log-actor, log-since, log-until, log-page
TIME_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S",
                "%Y-%m-%d"]


class ChangeLogFilterForm(forms.Form):
    action = forms.ChoiceField(required=False)
    actor = forms.CharField(required=False, max_length=255,
                            widget=forms.TextInput(attrs={"size": 18,
                                                          "placeholder": "user, project, ui:login"}))
    since = forms.DateTimeField(required=False, input_formats=TIME_FORMATS,
                                widget=forms.DateTimeInput(attrs={"type": "datetime-local"},
                                                           format="%Y-%m-%dT%H:%M"))
    until = forms.DateTimeField(required=False, input_formats=TIME_FORMATS,
                                widget=forms.DateTimeInput(attrs={"type": "datetime-local"},
                                                           format="%Y-%m-%dT%H:%M"))

    def __init__(self, *args, actions=(), **kwargs):
        super().__init__(*args, prefix=PREFIX, **kwargs)
        self.fields["action"].choices = [("", "any")] + [(a, a) for a in actions]

    def clean(self):
        cleaned = super().clean()
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and since >= until:
            self.add_error("until", "Until must be later than From.")
        return cleaned


def change_log_section(request, *, kind, entity, revertible=None):
    """The context of console/templates/ui/_change_log.html for one entity (as `log`).

    revertible: a function telling which entries get a "Revert" button (the page's app
    knows which of its changes it can undo); none without it."""
    bound = any(key.startswith(f"{PREFIX}-") and key != f"{PREFIX}-page" for key in request.GET)
    actions = change_actions(kind=kind, entity=entity)
    form = ChangeLogFilterForm(request.GET if bound else None, actions=actions)
    filters = {}
    if bound and form.is_valid():
        filters = {name: value for name, value in form.cleaned_data.items() if value}
    entries = change_list(kind=kind, entity=entity, **filters)
    if form.errors:  # the errors are shown, not unfiltered entries
        entries = entries.none()
    page = Paginator(entries, PER_PAGE).get_page(request.GET.get(f"{PREFIX}-page"))
    records = list(page.object_list)
    names = provider_names(records)
    kept = [(key, value) for key, value in request.GET.items()
            if key.startswith(f"{PREFIX}-") and key != f"{PREFIX}-page" and value]
    return {
        "recorded": bool(actions),  # the entity has any entry at all
        "form": form,
        "page": page,
        "filtered": bool(filters) or bool(form.errors),
        "rows": [{"entry": record, "lines": describe(record, names),
                  "revertible": bool(revertible and revertible(record))} for record in records],
        "next": request.get_full_path(),
        "page_query": urlencode(kept),
        "retention_days": settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS,
    }


# --------------------------------------------------------------------------
# Describing an entry
# --------------------------------------------------------------------------

SCALARS = (("name", "name"), ("parent", "parent"), ("project", "project"), ("user", "user"),
           ("consumer_type", "type"), ("source", "source"))


def provider_names(records):
    """{uuid: name} of the providers the entries mention (one query)."""
    uuids = set()
    for record in records:
        if record.kind == "provider":
            uuids.add(record.entity)
        for state in (record.before, record.after):
            if isinstance(state, dict):
                uuids.update((state.get("allocations") or {}).keys())
                if state.get("parent"):
                    uuids.add(state["parent"])
    if not uuids:
        return {}
    return dict(ResourceProvider.objects.filter(uuid__in=uuids).values_list("uuid", "name"))


def provider_link(uuid, names):
    if uuid in names:
        return format_html('<a href="{}">{}</a>', reverse("ui:provider", args=[uuid]), names[uuid])
    return format_html('<span class="mono">{}</span> <span class="muted">(deleted)</span>', uuid)


def consumer_link(uuid):
    return format_html('<a class="mono" href="{}">{}</a>', reverse("ui:consumer", args=[uuid]),
                       uuid)


def _resources(resources):
    if not resources:
        return "nothing"
    return ", ".join(f"{rc}={amount}" for rc, amount in sorted(resources.items()))


def fields_in_order(record):
    """An inventory record's fields in the API's order (jsonb keeps no key order)."""
    return sorted(record.items(), key=lambda item: (
        INVENTORY_FIELDS.index(item[0]) if item[0] in INVENTORY_FIELDS else len(INVENTORY_FIELDS),
        item[0]))


def _inventory_text(record):
    return ", ".join(f"{field} {value}" for field, value in fields_in_order(record))


def describe(record, names):
    """Readable lines (safe HTML) for one ChangeRecord's before -> after."""
    before, after = record.before, record.after
    lines = []
    if before is None and after is not None:
        lines.append("created" if record.kind != "consumer" else "new consumer")
    elif after is None and before is not None:
        lines.append("deleted" if record.kind != "consumer"
                     else "all allocations removed, consumer deleted")
    old, new = before or {}, after or {}

    if "generation" in old or "generation" in new:
        lines.append(_transition("generation", old.get("generation"), new.get("generation"),
                                 "generation" in old, "generation" in new))
    facts = []  # values known on one side only (e.g. the project an allocation write sent)
    for key, label in SCALARS:
        if key not in old and key not in new:
            continue
        if key in old and key in new and old[key] == new[key]:
            continue
        if key == "parent":
            values = [provider_link(v, names) if v else "none"
                      for v in (old.get(key), new.get(key))]
        else:
            values = [old.get(key), new.get(key)]
        line = _transition(label, *values, key in old, key in new)
        (lines if key in old and key in new else facts).append(line)
    if facts:
        lines.append(format_html_join(" · ", "{}", ((fact,) for fact in facts)))
    if "inventories" in old or "inventories" in new:
        lines += _inventory_lines(old.get("inventories"), new.get("inventories"))
    for key in ("traits", "aggregates"):
        if key in old or key in new:
            lines += _set_lines(key, old.get(key), new.get(key))
    if "allocations" in old or "allocations" in new:
        lines += _holding_lines(old.get("allocations"), new.get("allocations"),
                                lambda uuid: format_html("on {}", provider_link(uuid, names)))
    if "consumers" in old or "consumers" in new:
        lines += _holding_lines(old.get("consumers"), new.get("consumers"),
                                lambda uuid: format_html("consumer {}", consumer_link(uuid)))
    if "rows" in new:
        lines.append(format_html("{} rows imported", sum(new["rows"].values())))
    return lines


def _transition(label, old, new, has_old, has_new):
    if has_old and has_new:
        return format_html("{} {} → {}", label, old, new)
    return format_html("{} {}", label, new if has_new else old)


def _inventory_lines(old, new):
    if old is None:  # not known: show what it is now
        return [format_html("<b>{}</b>: {}", rc, _inventory_text(fields))
                for rc, fields in sorted((new or {}).items())]
    new = new or {}
    lines = []
    for rc in sorted(set(old) | set(new)):
        if rc not in old:
            lines.append(format_html("+ <b>{}</b>: {}", rc, _inventory_text(new[rc])))
        elif rc not in new:
            lines.append(format_html("− <b>{}</b> (was {})", rc, _inventory_text(old[rc])))
        else:
            changed = [(field, old[rc].get(field), value)
                       for field, value in fields_in_order(new[rc])
                       if old[rc].get(field) != value]
            if changed:
                lines.append(format_html("<b>{}</b>: {}", rc, format_html_join(
                    ", ", "{} {} → {}", changed)))
    return lines


def _set_lines(key, old, new):
    old, new = set(old or ()), set(new or ())
    added, removed = sorted(new - old), sorted(old - new)
    if not added and not removed:
        return [format_html("{} unchanged", key)]
    return ([format_html("+ {}", name) for name in added]
            + [format_html("− {}", name) for name in removed])


def _holding_lines(old, new, label):
    """Per provider (consumer entries) or per consumer (provider entries): held before -> now."""
    lines = []
    new = new or {}
    for key in sorted(set(old or {}) | set(new)):
        if old is None:
            lines.append(format_html("{}: now {}", label(key), _resources(new.get(key))))
            continue
        was, now = old.get(key), new.get(key)
        if was == now:
            continue
        lines.append(format_html("{}: {} → {}", label(key), _resources(was), _resources(now)))
    return lines
