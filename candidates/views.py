"""The candidates explorer of the operator UI (/ui/candidates/).

Runs a GET /allocation_candidates query string at a chosen microversion
through the same functions as the API view (request.parse_request ->
engine.find_candidates -> present.render), with the deployment's options,
and tabulates the answer. A query the API refuses shows Placement's status,
message and code, and the error body the API would send.
"""
import json
from http import HTTPStatus

from django.contrib.admin.views.decorators import staff_member_required
from django.http import QueryDict
from django.shortcuts import render
from django.views.decorators.http import require_GET

from candidates import engine, present
from candidates.forms import CandidatesForm
from candidates.options import engine_options
from candidates.request import parse_request
from placement_site.api.errors import error_body
from placement_site.api.exceptions import domain_error_status
from placement_site.api.microversion import Version
from placement_site.service_errors import SERVICE_ERRORS, error_code, error_message
from providers.models import ResourceProvider


def run_query(query_string, version):
    """Run GET /allocation_candidates?query_string at `version` ("1.39").

    Returns (body, error): the answer and None, or Placement's error body and
    {status, title, code, detail} for a refused query.
    """
    version = Version.parse(version)
    try:
        parsed = parse_request(QueryDict(query_string), version)
        view = parsed.view
        result = engine.find_candidates(
            parsed.query, whole_trees=view.tree_summaries, all_classes=view.all_classes,
            with_traits=view.traits, **engine_options())
    except SERVICE_ERRORS as exc:
        status = domain_error_status(exc)
        body = error_body(status, error_message(exc), "", code=error_code(exc), version=version)
        # The page shows the code the API sends at this version (none before 1.23),
        # and Placement's message without the JSON-schema dump that follows it.
        error = {"status": status, "title": HTTPStatus(status).phrase,
                 "code": body["errors"][0].get("code"),
                 "detail": error_message(exc).split(SCHEMA_DUMP_START, 1)[0]}
        return body, error
    return present.render(result, view), None


# A query-string schema refusal ends with jsonschema's account of the schema and the
# instance: useful in the raw body, noise in the page's one-line message.
SCHEMA_DUMP_START = " Failed validating "


def _candidate_tables(body):
    """Normalise any microversion's answer into rows for the two tables."""
    summaries = body.get("provider_summaries") or {}
    requests = body.get("allocation_requests") or []
    uuids = set(summaries)
    normalised = []
    for req in requests:
        allocations = req.get("allocations") or {}
        if isinstance(allocations, list):  # 1.10-1.11 list form
            allocations = {a["resource_provider"]["uuid"]: {"resources": a["resources"]}
                           for a in allocations}
        uuids.update(allocations)
        mappings = req.get("mappings") or {}
        for group_uuids in mappings.values():
            uuids.update(group_uuids)
        normalised.append({"allocations": allocations, "mappings": mappings})
    names = dict(ResourceProvider.objects.filter(uuid__in=uuids).values_list("uuid", "name"))
    candidate_rows = []
    for index, req in enumerate(normalised, start=1):
        candidate_rows.append({
            "index": index,
            "allocations": [
                {"uuid": u, "name": names.get(u, ""),
                 "resources": sorted(a.get("resources", {}).items())}
                for u, a in sorted(req["allocations"].items(), key=lambda i: names.get(i[0], i[0]))
            ],
            "mappings": sorted((suffix or '""', [names.get(u, u) for u in us])
                               for suffix, us in req["mappings"].items()),
        })
    summary_rows = []
    for u, summary in summaries.items():
        root = summary.get("root_provider_uuid")
        parent = summary.get("parent_provider_uuid")
        summary_rows.append({
            "uuid": u, "name": names.get(u, ""),
            "root": root, "root_name": names.get(root, ""),
            "parent": parent, "parent_name": names.get(parent, ""),
            "resources": sorted((rc, r.get("used"), r.get("capacity"))
                                for rc, r in (summary.get("resources") or {}).items()),
            "traits": sorted(summary.get("traits") or []),
            "has_tree": "root_provider_uuid" in summary,
            "has_traits": "traits" in summary,
        })
    summary_rows.sort(key=lambda r: (names.get(r["root"], r["root"] or ""), r["name"]))
    return candidate_rows, summary_rows


@staff_member_required
@require_GET
def candidates(request):
    form = CandidatesForm(request.GET if "q" in request.GET else None)
    context = {"form": form}
    if form.is_bound and form.is_valid():
        version = form.cleaned_data["version"]
        body, error = run_query(form.cleaned_data["q"], version)
        context.update({"ran": True, "status": error["status"] if error else 200,
                        "api_path": form.api_path(), "version": version,
                        "raw": json.dumps(body, indent=2, sort_keys=True)})
        if error:
            context["error"] = error
        else:
            context["candidate_rows"], context["summary_rows"] = _candidate_tables(body)
    return render(request, "ui/candidates.html", context)
