"""The candidates explorer of the operator UI (/ui/candidates/) and its "why not?"
explainer (/ui/candidates/why-not/, JSON at /ui/candidates/why-not.json).

The explorer runs a GET /allocation_candidates query string at a chosen
microversion through the same functions as the API view (request.parse_request ->
engine.find_candidates -> present.render), with the deployment's options, and
tabulates one page of the answer (PER_PAGE candidates, consecutive ones of a tree
under one heading; the engine summarises only that page, so a page costs about the
same whatever the size of the answer). The answer can be listed in another order
or narrowed to trees by name (ui/ordering.py: the whole answer, before it is
paged). A query the API refuses shows Placement's status, message and the code
the API sends at that microversion.

The explainer parses the query the same way and asks candidates.explain, per
tree and per provider, what keeps them out of the answer.
"""
import csv
from collections import Counter
from http import HTTPStatus

import orjson

from django.core.paginator import Paginator
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.encoding import iri_to_uri
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods

from console.door import CANDIDATES, door
from candidates import engine, present
from console.candidates.forms import CandidatesForm, FlavorForm, OrderForm
from candidates.options import engine_options, extensions
from candidates.request import parse_request
from candidates.sql import summaries as summary_sql
from console.candidates.ordering import Listing, room_left
from foundation.api.errors import error_body
from foundation.api.exceptions import domain_error_status
from foundation.api.microversion import Version
from foundation.domain_errors import DomainError, error_message
from foundation.front_door import REQUEST_LINE_LIMIT, fits_in_link, request_line_bytes
from foundation.ops import collector
from foundation.spreadsheet import safe_cell
from providers.models import ResourceProvider
from console.links import row_url

PER_PAGE = 50   # candidates per page of the explorer
# The raw response of a page shows inline up to this many bytes; a larger one (a page of
# big trees: hundreds of summaries, most of the page's weight) only when asked for
# (raw=1), so that the page stays under 200 KiB.
RAW_INLINE_UP_TO = 32 * 1024


def raw_json(body):
    """A response document as indented JSON with sorted keys (orjson: json.dumps with
    indent= runs in pure Python, slow on a page of candidates), escaped for the text of
    a <pre>: only &, < and > (autoescaping's &quot; for every quote made a page of
    candidates a quarter larger)."""
    text = orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
    return mark_safe(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def _raw(body, asked):
    """raw_json(body) if asked for or small enough to show inline (RAW_INLINE_UP_TO
    bytes), else None."""
    shown = raw_json(body)
    return shown if asked or len(shown.encode()) <= RAW_INLINE_UP_TO else None


def refusal(exc, version):
    """(Placement's error body, {status, title, code, detail}) for a refused query: the
    code the API sends at `version` (none before 1.23), and Placement's message without
    the JSON-schema dump that follows it."""
    status = domain_error_status(exc)
    body = error_body(status, error_message(exc), "", code=exc.code, version=version)
    error = {"status": status, "title": HTTPStatus(status).phrase,
             "code": body["errors"][0].get("code"),
             "detail": error_message(exc).split(SCHEMA_DUMP_START, 1)[0]}
    return body, error


# A query-string schema refusal ends with jsonschema's account of the schema and the
# instance: useful in the raw body, noise in the page's one-line message.
SCHEMA_DUMP_START = " Failed validating "


def run_query(query_string, version, page=None, order=None, named=None):
    """Run GET /allocation_candidates?query_string at `version` ("1.39").

    Returns (body, error, listing): the answer (page `page` of PER_PAGE candidates, or
    all of it when page is None), None and the ordering.Listing that cut it; or
    Placement's error body, {status, title, code, detail} and None for a refused query.
    order, named: the answer in that order (ordering.ORDERS), narrowed to the trees with
    a provider whose name contains `named`, before it is paged.
    """
    version = Version.parse(version)
    listing = Listing(order, named, page or 1, None if page is None else PER_PAGE)
    try:
        parsed = parse_request(QueryDict(query_string), version, extensions())
        view = parsed.view
        answer = engine.find_answer(
            parsed.query, whole_trees=view.tree_summaries, all_classes=view.all_classes,
            with_traits=view.traits, **engine_options())
        result = engine.summarise(answer, None if answer is None else listing(answer))
    except DomainError as exc:
        body, error = refusal(exc, version)
        return body, error, None
    unnamed = set(listing.trees) - result.uuids.keys()
    root_uuids = {**result.uuids, **summary_sql.uuids(sorted(unnamed))}
    listing.tree_uuids = [root_uuids[root] for root in listing.trees]
    return present.render(result, view), None, listing


def _candidate_tables(body, listing=None, first=1):
    """Normalise any microversion's answer into rows for the two tables, and, given the
    Listing of a page (whose first candidate is number `first` of the answer),
    the candidate rows grouped by tree. The summary rows are those of the providers the
    candidates use (a page's whole trees can hold hundreds more: the raw response has
    them); names are read for what is shown only."""
    summaries = body.get("provider_summaries") or {}
    normalised, used = [], set()
    for req in body.get("allocation_requests") or []:
        allocations = req.get("allocations") or {}
        if isinstance(allocations, list):  # 1.10-1.11 list form
            allocations = {a["resource_provider"]["uuid"]: {"resources": a["resources"]}
                           for a in allocations}
        used.update(allocations)
        mappings = req.get("mappings") or {}
        for group_uuids in mappings.values():
            used.update(group_uuids)
        normalised.append({"allocations": allocations, "mappings": mappings})
    shown = [u for u in summaries if u in used]
    uuids = set(used)
    for u in shown:
        uuids.update((summaries[u].get("root_provider_uuid"),
                      summaries[u].get("parent_provider_uuid")))
    tree_uuids = listing.tree_uuids if listing is not None else []
    uuids.update(tree_uuids)
    uuids.discard(None)
    names = dict(ResourceProvider.objects.filter(uuid__in=uuids).values_list("uuid", "name"))
    link = row_url("ui:provider")
    # (capacity, used) per (provider, class) now, from the summaries: what a candidate
    # leaves
    figures = {(u, rc): (r.get("capacity", 0), r.get("used", 0))
               for u in shown
               for rc, r in (summaries[u].get("resources") or {}).items()}
    candidate_rows = []
    for index, req in enumerate(normalised, start=first):
        allocations = sorted(req["allocations"].items(),
                             key=lambda i: names.get(i[0], i[0]))
        candidate_rows.append({
            "index": index,
            "room": _room(figures, allocations),
            "allocations": [
                {"uuid": u, "name": names.get(u, ""), "url": link(u),
                 "resources": [(rc, amount, _left(figures, u, rc, amount))
                               for rc, amount in sorted(a.get("resources", {}).items())]}
                for u, a in allocations
            ],
            "mappings": sorted((suffix or '""', [names.get(u, u) for u in us])
                               for suffix, us in req["mappings"].items()),
        })
    summary_rows = []
    for u in shown:
        summary = summaries[u]
        root = summary.get("root_provider_uuid")
        parent = summary.get("parent_provider_uuid")
        summary_rows.append({
            "uuid": u, "name": names.get(u, ""), "url": link(u),
            "root": root, "root_name": names.get(root, ""),
            "parent": parent, "parent_name": names.get(parent, ""),
            "resources": sorted((rc, r.get("used"), r.get("capacity"))
                                for rc, r in (summary.get("resources") or {}).items()),
            "traits": sorted(summary.get("traits") or []),
            "has_tree": "root_provider_uuid" in summary,
            "has_traits": "traits" in summary,
        })
    summary_rows.sort(key=lambda r: (names.get(r["root"], r["root"] or ""), r["name"]))
    return candidate_rows, summary_rows, _tree_groups(candidate_rows, listing, tree_uuids,
                                                      names, link)


def _tree_groups(candidate_rows, listing, tree_uuids, names, link):
    """The page's candidate rows in runs of one tree each, in the page's order (a tree
    whose candidates are not together, in an order by room, has several runs)."""
    groups = []
    if not tree_uuids:
        return groups
    on_page = Counter(listing.trees)
    for row, root, uuid in zip(candidate_rows, listing.trees, tree_uuids):
        if not groups or groups[-1]["root"] != root:
            groups.append({"root": root, "uuid": uuid, "name": names.get(uuid, ""),
                           "url": link(uuid), "on_page": on_page[root],
                           "in_answer": listing.tree_counts[root], "rows": []})
        groups[-1]["rows"].append(row)
    return groups


def _left(figures, uuid, rc, amount):
    """What the provider would have left of rc after this candidate ("" when the answer
    has no summary of it: below 1.12)."""
    shown = figures.get((uuid, rc))
    return "" if shown is None else shown[0] - shown[1] - amount


def _room(figures, allocations):
    """The room the candidate leaves (ordering.room_left) as a rounded percentage,
    "" when the answer has no summaries to say."""
    known = [(*figures[(u, rc)], amount) for u, a in allocations
             for rc, amount in a.get("resources", {}).items() if (u, rc) in figures]
    room = room_left(known)
    return "" if room is None else f"{room * 100:.0f}%"


FLAVOR_KEPT = "candidates-flavor"   # session key: the last flavor written, with its query


def _kept_flavor(request, query):
    """The flavor form as last filled in, when the page shows the query it wrote."""
    kept = request.session.get(FLAVOR_KEPT)
    if not kept or query is None or kept.get("q") != query:
        return None
    data = QueryDict(mutable=True)
    for key, values in kept["data"].items():
        if key != "csrfmiddlewaretoken":
            data.setlist(key, values)
    return FlavorForm(data)


@door(read=CANDIDATES, post_reads=True)
@require_http_methods(["GET", "POST"])
@collector.paused()   # large answers of small objects, none in a cycle
def candidates(request):
    """The explorer. Its forms are posted: a flavor is first written as a query string;
    a query whose page URL fits a link is redirected to it (shareable, and the query
    shows in the query box), a longer one is answered from the post, the page saying
    what the front door makes of it."""
    flavor = FlavorForm(request.POST if "flavor" in request.POST else None)
    params = _params(request)
    if flavor.is_bound:
        if not flavor.is_valid():
            return render(request, "ui/candidates.html",
                          {"form": CandidatesForm(), "flavor": flavor})
        params = {"q": flavor.query(), "version": flavor.version_name}
        # the flavor stays filled in on the page its query is answered on
        request.session[FLAVOR_KEPT] = {"q": params["q"], "data": dict(request.POST.lists())}
    else:
        flavor = _kept_flavor(request, params.get("q")) or flavor
    form = CandidatesForm(params if "q" in params else None)
    context = {"form": form, "flavor": flavor}
    if form.is_bound and form.is_valid():
        version = form.cleaned_data["version"]
        query = form.cleaned_data["q"]
        page_number = _page_number(params.get("page"))
        listing = OrderForm(params)
        order, named = listing.chosen()
        url = page_url("ui:candidates", q=query, version=version, **listing.params(),
                       page=params.get("page"))
        if request.method == "POST" and fits_in_link(url):
            return redirect(url)
        context["long_query"] = query_size(form.api_path(), url)
        body, error, answer_page = run_query(query, version, page=page_number, order=order,
                                            named=named)
        listed = urlencode({"q": query, "version": version, **listing.params()})
        asked = params.get("raw") == "1"
        context.update({"ran": True, "status": error["status"] if error else 200,
                        "api_path": form.api_path(), "version": version,
                        "raw": _raw(body, asked), "raw_asked": asked,
                        "listing": listing, "named": named,
                        "why_not_query": urlencode({"q": query, "version": version}),
                        "csv_query": listed})
        if error:
            context["error"] = error
        else:
            paginator = Paginator(range(answer_page.total), PER_PAGE)
            page = paginator.get_page(answer_page.page)
            rows, summaries, groups = _candidate_tables(
                body, answer_page, first=page.start_index() if answer_page.total else 1)
            context.update({
                "candidate_rows": rows, "summary_rows": summaries, "tree_groups": groups,
                "unused_summaries": len(body["provider_summaries"]) - len(summaries),
                "total": answer_page.total, "answered": answer_page.answered,
                "page": page, "paged": paginator.num_pages > 1,
                "page_links": list(paginator.get_elided_page_range(page.number)),
                "page_query": listed,
                "trees_in_answer": len(answer_page.tree_counts),
                "randomized": engine_options()["randomize"],
            })
    return render(request, "ui/candidates.html", context)


@door(read=CANDIDATES, post_reads=True)
@require_http_methods(["GET", "POST"])
@collector.paused()   # large answers of small objects, none in a cycle
def candidates_csv(request):
    """The whole answer of the explorer's query (every page, in the page's order and
    narrowed as the page is) as CSV: one row per allocation (candidate number, tree,
    provider, class, amount, what the provider would have left, the candidate's room
    left). A refused query gives the header row only."""
    form = CandidatesForm(_params(request))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="candidates.csv"'
    writer = csv.writer(response)
    writer.writerow(["Candidate", "Tree", "Provider", "Provider uuid", "Resource class",
                     "Amount", "Left after", "Room left"])
    if not form.is_valid():
        return response
    order, named = OrderForm(_params(request)).chosen()
    body, error, _ = run_query(form.cleaned_data["q"], form.cleaned_data["version"],
                               order=order, named=named)
    if error:
        return response
    rows, summaries, _ = _candidate_tables(body)
    roots = {s["uuid"]: s["root_name"] for s in summaries if s["has_tree"]}
    for row in rows:
        for alloc in row["allocations"]:
            for rc, amount, left in alloc["resources"]:
                writer.writerow([row["index"], safe_cell(roots.get(alloc["uuid"], "")),
                                 safe_cell(alloc["name"]), alloc["uuid"], rc, amount, left,
                                 row["room"]])
    return response


def _params(request):
    """The pages' parameters: a posted form's, or the URL's."""
    return request.POST if request.method == "POST" else request.GET


def page_url(view_name, **params):
    """The URL of a page with these parameters (those None or blank left out)."""
    return reverse(view_name) + "?" + urlencode(
        {key: value for key, value in params.items() if value not in (None, "", False)})


def query_size(api_path, url):
    """What the front door makes of a query, or None when it takes both GET `api_path`
    (/allocation_candidates?query) and the page's own `url`: the query's size as sent,
    the request line of the API's GET and the limit, whether the front door would refuse
    it, and whether the page is too long to be a link (it is then posted: its pager, CSV
    and why-not are buttons)."""
    sent = iri_to_uri(api_path)
    api_line = request_line_bytes(sent)
    refused, posted = api_line > REQUEST_LINE_LIMIT, not fits_in_link(url)
    if not (refused or posted):
        return None
    return {"bytes": len(sent.partition("?")[2]), "api_line": api_line,
            "limit": REQUEST_LINE_LIMIT, "api_refused": refused, "posted": posted}


def _page_number(value):
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1
