"""The history page (/ui/history/) and its timeline as CSV (/ui/history.csv).

One page for every scope: ?provider=, ?tree=, ?aggregate= (uuids) or none (the
whole cloud), each optionally narrowed by ?resource_class=; ?window= 24h, 7d or
30d. Charts of usage against capacity per class (console.history.chart), the fill-ups
("when did this host fill up, and who did it"), and the "what changed here" timeline,
paginated; the CSV holds the same rows, all of them.
"""
import csv
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.door import PROVIDER_USAGES, door
from console.history import reads
from console.history.chart import step_chart
from console.history.words import entry_words
from foundation.spreadsheet import safe_cell
from providers.models import ResourceProvider

PER_PAGE = 25
FILL_UPS = 10   # the latest fill-ups listed above the charts (each is in the timeline)
SCOPES = ("provider", "tree", "aggregate")


class HistoryForm(forms.Form):
    provider = forms.CharField(required=False, max_length=36)
    tree = forms.CharField(required=False, max_length=36)
    aggregate = forms.CharField(required=False, max_length=36)
    resource_class = forms.CharField(required=False, max_length=255)
    window = forms.ChoiceField(required=False, choices=[(w, w) for w in reads.WINDOWS])
    entry = forms.IntegerField(required=False, min_value=1)

    def clean(self):
        cleaned = super().clean()
        named = [name for name in SCOPES if cleaned.get(name)]
        if len(named) > 1:
            raise forms.ValidationError(
                f"Name one of provider, tree and aggregate, not {' and '.join(named)}.")
        cleaned["window"] = cleaned.get("window") or reads.DEFAULT_WINDOW
        return cleaned


def _read(request):
    """(History, form) of the request's scope and window; or (None, form, status) refused."""
    form = HistoryForm(request.GET)
    if not form.is_valid():
        return None, form, 400
    data = form.cleaned_data
    try:
        scope = reads.scope_of(**{name: data[name] for name in (*SCOPES, "resource_class")})
    except reads.ScopeNotFound as missing:
        form.add_error(None, str(missing))
        return None, form, 404
    return reads.history(scope, window=data["window"]), form, 200


@door(read=PROVIDER_USAGES)
@require_GET
def history(request):
    found, form, status = _read(request)
    if found is None:
        return render(request, "ui/history.html", {"form": form}, status=status)
    entries = found.entries
    page_number = request.GET.get("page")
    wanted = form.cleaned_data["entry"]
    index = next((i for i, entry in enumerate(entries) if entry.id == wanted), None)
    if index is not None:  # a chart's marker: the page holding that entry
        page_number = index // PER_PAGE + 1
    page = Paginator(entries, PER_PAGE).get_page(page_number)
    fill_ups = [entry for entry in entries if entry.id in found.filled_entries][:FILL_UPS]
    names = _names_of(list(page.object_list) + fill_ups)
    query = {**found.scope.query, "window": form.cleaned_data["window"]}
    return render(request, "ui/history.html", {
        "form": form,
        "history": found,
        "charts": [(step_chart(series, start=found.window_start, end=found.end,
                               known_from=found.start), series)
                   for series in found.series],
        "fill_ups": [_row(entry, names, found) for entry in fill_ups],
        "page": page,
        "rows": [_row(entry, names, found) for entry in page.object_list],
        "query": urlencode(query),
        "scope_query": urlencode(found.scope.query),
        "windows": list(reads.WINDOWS),
        "window": form.cleaned_data["window"],
        "entry_cap": reads.ENTRY_CAP,
        "retention_days": settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS,
    })


def _names_of(entries):
    """{uuid: name} of the providers `entries` are about (one query)."""
    uuids = {entry.entity for entry in entries}
    return dict(ResourceProvider.objects.filter(uuid__in=uuids).values_list("uuid", "name"))


def _row(entry, names, found):
    name = names.get(entry.entity, entry.entity)
    return {"entry": entry, "name": name, "words": entry_words(entry, name),
            "filled": found.filled_entries.get(entry.id, [])}


CSV_COLUMNS = ["time", "provider_uuid", "provider_name", "actor", "project_id", "request_id",
               "action", "change", "reached_capacity"]


@door(read=PROVIDER_USAGES)
@require_GET
def history_csv(request):
    """The timeline's rows, all of them (up to reads.ENTRY_CAP), newest first."""
    found, form, status = _read(request)
    if found is None:
        problems = [str(error) for errors in form.errors.values() for error in errors]
        return HttpResponse("\n".join(problems) + "\n", status=status,
                            content_type="text/plain; charset=utf-8")
    names = _names_of(found.entries)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="history.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_COLUMNS)
    for entry in found.entries:
        name = names.get(entry.entity, "")
        writer.writerow([safe_cell(value) for value in (
            entry.created_at.isoformat(), entry.entity, name, entry.actor, entry.project_id,
            entry.request_id, entry.action,
            "; ".join(entry_words(entry, name or entry.entity, short=False)),
            " ".join(found.filled_entries.get(entry.id, [])))])
    return response
