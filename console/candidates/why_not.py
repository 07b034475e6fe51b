"""The "why not?" pages of the operator UI (/ui/candidates/why-not/ and its JSON).

Without a tree filter the page answers for the whole cloud first
(candidates.explain.cloud: how many trees fit, per reason how many trees and providers,
the closest hosts), then explains one page of trees; identical reasons of consecutive
siblings are folded into one row (explain.cloud.collapse_siblings).
"""
from http import HTTPStatus

from django.core.paginator import Paginator
from django.http import JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods

from console.door import CANDIDATES, door
from candidates import explain
from candidates.explain import reasons as explain_reasons
from candidates.explain.cloud import collapse_siblings
from candidates.options import engine_options, extensions
from candidates.request import parse_request
from console.candidates.forms import WhyNotForm
from console.candidates.pages import _params, page_url, query_size, refusal
from foundation.api.microversion import Version
from foundation.domain_errors import DomainError
from foundation.front_door import fits_in_link
from foundation.ops import collector
from console.links import row_url


# --- why not? -----------------------------------------------------------------------------


def explain_query(query_string, version, *, page=1, per_page=None, tree=None, cloud=False):
    """Explain GET /allocation_candidates?query_string at `version` ("1.39") over one page
    of trees (per_page of them, default explain.PER_PAGE) or the tree of the provider
    named or with uuid `tree`.

    Returns (explanation, None) (candidates.explain's document) or (None, error) with
    error = {status, title, code, detail} as the API would refuse the query.
    """
    version = Version.parse(version)
    try:
        parsed = parse_request(QueryDict(query_string), version, extensions())
        return explain.explain(parsed.query, page=page or 1,
                               per_page=per_page or explain.PER_PAGE, tree=tree,
                               max_candidates=engine_options()["max_candidates"],
                               cloud=cloud), None
    except DomainError as exc:
        return None, refusal(exc, version)[1]
    except explain.UnknownTree as exc:
        return None, {"status": 400, "title": HTTPStatus(400).phrase, "code": None,
                      "detail": str(exc)}


def _form_error(form):
    """The form's problems as one refusal (400)."""
    detail = " ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
    return {"status": 400, "title": HTTPStatus(400).phrase, "code": None, "detail": detail}


@door(read=CANDIDATES, post_reads=True)
@require_http_methods(["GET", "POST"])
@collector.paused()   # large answers of small objects, none in a cycle
def why_not(request):
    """The explainer's page: a form, then per tree and per provider what excludes it.
    A refused query shows Placement's status, message and code in the page, which
    itself answers 200 like the candidates page (the JSON answers the refusal's
    status). Posted like the explorer: redirected to its URL when that fits a link."""
    params = _params(request)
    form = WhyNotForm(params if "q" in params else None)
    context = {"form": form}
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        base = {"q": data["q"], "version": data["version"]}
        for optional in ("tree", "per_page"):
            if data[optional]:
                base[optional] = data[optional]
        json_base = dict(base)
        if data["excluded"]:
            base["excluded"] = "on"
        url = page_url("ui:why-not", **base, page=data["page"])
        if request.method == "POST" and fits_in_link(url):
            return redirect(url)
        context.update({"long_query": query_size(form.api_path(), url),
                        "posted_fields": list(base.items())})
        explanation, error = explain_query(data["q"], data["version"], page=data["page"],
                                           per_page=data["per_page"], tree=data["tree"],
                                           cloud=True)
        if not error and "cloud" in explanation:
            context["cloud"] = dict(explanation["cloud"], closest=_tree_cards(
                explanation["cloud"]["closest"], collapsed=True))
        context.update({"ran": True, "version": data["version"], "api_path": form.api_path(),
                        "candidates_query": urlencode({"q": data["q"],
                                                       "version": data["version"]})})
        if error:
            context["error"] = error
        else:
            info = explanation["page"]
            trees = explanation["trees"]
            shown = [t for t in trees if not t["fits"]] if data["excluded"] else trees
            context.update({
                "explanation": explanation,
                "trees": _tree_cards(shown),
                "hidden_fitting": len(trees) - len(shown),
                "summary": reason_summary(trees),
                "page_query": urlencode(base),
                "json_query": urlencode({**json_base, "page": info["number"]}),
                "page_links": list(Paginator(range(info["trees"] or 1), info["per_page"])
                                   .get_elided_page_range(info["number"])),
                "first_tree": (info["number"] - 1) * info["per_page"] + 1,
                "last_tree": (info["number"] - 1) * info["per_page"]
                + len(explanation["trees"]),
            })
    return render(request, "ui/why_not.html", context)


def reason_summary(trees):
    """[(label, trees, providers)]: per reason label (explain.reasons.summary_label), how
    many of the excluded trees have such a reason (their own or a provider's) and on how
    many providers; most trees first."""
    found = {}
    for tree in trees:
        if tree["fits"]:
            continue
        for reason in tree["reasons"]:
            found.setdefault(explain_reasons.summary_label(reason), [set(), set()])[0].add(
                tree["root"]["uuid"])
        for provider in tree["providers"]:
            for reason in provider["reasons"]:
                seen = found.setdefault(explain_reasons.summary_label(reason), [set(), set()])
                seen[0].add(tree["root"]["uuid"])
                seen[1].add(provider["uuid"])
    return sorted(((label, len(roots), len(rps)) for label, (roots, rps) in found.items()),
                  key=lambda row: (-row[1], row[0]))


def _tree_cards(trees, collapsed=False):
    """The explanation's trees with what the page adds: links, whether any provider has
    a reason (a fitting tree folds its providers away), and runs of siblings saying the
    same thing folded into one row (`collapsed`: already folded)."""
    link = row_url("ui:provider")
    cards = []
    for tree in trees:
        card = dict(tree, url=link(tree["root"]["uuid"]),
                    has_provider_reasons=any(p["reasons"] for p in tree["providers"]))
        providers = tree["providers"] if collapsed else collapse_siblings(tree["providers"])
        card["providers"] = [dict(p, url=link(p["uuid"])) for p in providers]
        card["shared_with"] = [dict(t, url=link(t["uuid"])) for t in tree["shared_with"]]
        cards.append(card)
    return cards


@door(read=CANDIDATES, post_reads=True)
@require_http_methods(["GET", "POST"])
@collector.paused()   # large answers of small objects, none in a cycle
def why_not_json(request):
    """The explanation as JSON for scripts (shape: candidates.explain's docstring), plus
    the query and version. Parameters: q, version, and optionally page, per_page (up to
    explain.MAX_PER_PAGE trees) and tree. A refused query -> {"error": {status, title,
    code, detail}} with its status (400). A query too long for a URL may be posted."""
    form = WhyNotForm(_params(request))
    if not form.is_valid():
        return JsonResponse({"error": _form_error(form)}, status=400)
    data = form.cleaned_data
    explanation, error = explain_query(data["q"], data["version"], page=data["page"],
                                       per_page=data["per_page"], tree=data["tree"])
    if error:
        return JsonResponse({"error": error}, status=error["status"])
    return JsonResponse({"query": data["q"], "version": data["version"], **explanation})
