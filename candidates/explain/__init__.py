"""Why not? For one allocation-candidates query, per tree and per provider, what keeps
it out of the answer.

Built on the engine's own steps, never a second engine: the same resolved names
and §3.6 steps (engine.evaluate, which raises the same 400s), the same facts
(engine.load_facts over a page of trees), the same partial candidates
(candidate_set.group_partials) and the same combination rules
(combine.anchor_streams / judge_for). Whether a tree "fits" is read off those
results; the reasons are then asked of the very predicates generation uses
(candidate_set.misfit, provider_refusals, entry_refusal, entry_anchors and
combine's judge problems), so an explanation cannot disagree with the answer.

Modules: page.py (one page of trees: facts, partials, candidates counted, sharing
providers looked for), why.py (the reasons of one tree, from the engine's
predicates), reasons.py (one builder per kind of reason).

A tree *fits* iff some candidate of the answer (no limit) allocates from, or
maps a group to, one of its providers: candidates built around the tree that
use its providers, or candidates of other trees that use its sharing providers.
That is exactly the set of roots of the providers appearing in
GET /allocation_candidates (tests/candidates/test_explain_consistency.py).

Bounded: one page of trees (PER_PAGE, at most MAX_PER_PAGE) in (name, id) order,
or the one tree of a provider; a constant number of queries per page, whatever
the number of providers (one more batch of facts only when a sharing provider
of the page must be looked for in the candidates of trees outside the page).

``explain(query, ...)`` returns (JSON-ready; /ui/candidates/why-not.json serves it)::

    {
      "reasons": [reason, ...],      # request-wide: kinds "stopped" (a §3.6 step proved
                                     # the answer empty: no tree is looked at), "limit"
      "page": {"number": 1, "per_page": 20, "pages": 3, "trees": 42},
      "fitting_trees": 1,            # trees of this page that fit
      "trees": [{
        "root": {"uuid": "...", "name": "cn1"},
        "fits": false,               # see above
        "candidates": 0,             # candidates built around this tree ...
        "more": false,               # ... true: at least that many (counting stopped)
        "shared_with": [{"uuid": "...", "name": "cn2"}],   # other trees whose candidates
                                     # use this tree's sharing providers (when looked for)
        "reasons": [reason, ...],    # tree-wide: root_required, root_forbidden,
                                     # root_member_of, root_forbidden_aggregate, in_tree,
                                     # no_provider, missing_trait, forbidden_aggregate,
                                     # resourceless_unfiltered, isolate, same_subtree,
                                     # capacity / max_unit (summed amounts), same_tree,
                                     # sharing_only, no_candidate
        "providers": [{
          "uuid": "...", "name": "cn1-numa0", "parent_uuid": "..." | null, "depth": 1,
          "root_uuid": "...", "sharing": false,
          "foreign": false,          # a sharing provider of another tree considered here
          "reasons": [reason, ...]   # no_inventory, capacity, max_unit, min_unit,
                                     # step_size, missing_trait, forbidden_trait,
                                     # not_in_aggregate, forbidden_aggregate
        }]
      }]
    }

and a reason is ``{"kind", "group", "message", "details"}`` (explain/reasons.py:
``kind`` for scripts, ``message`` for people, ``group`` the request group's suffix, ""
for the unsuffixed one, null when not about one group). A tree that does not fit
gets the reasons of the groups that have no partial candidate there (when every
group has some, the combination rules say why); a tree that fits gets no tree
reasons, only, per provider, why it cannot serve a group.
"""
import math

from candidates import engine
from candidates.explain import reasons
from candidates.explain.cloud import summarize
from candidates.explain.page import Page
from candidates.resolve import resolve
from candidates.sql import topology, trees as trees_sql

PER_PAGE = 20
MAX_PER_PAGE = 100


class UnknownTree(LookupError):
    """explain(tree=...) names no provider, whole or in part."""


def explain(query, *, page=1, per_page=PER_PAGE, tree=None, max_candidates=-1, cloud=False):
    """Explain a request.CandidateQuery over one page of trees (see the module docstring).

    page: 1-based page number (clamped to the pages there are); per_page: trees per page
    (1..MAX_PER_PAGE); tree: uuid or name of a provider: explain its tree only; or else
    a part of provider names: explain (a page of) the trees of the providers named so;
    max_candidates: the deployment's [placement] max_allocation_candidates (only noted);
    cloud: without a tree, explain every tree (still a constant number of queries) and
    add "cloud" (explain.cloud.summarize: counts per reason over all trees, the closest
    hosts); the page's trees are then a slice of them.
    Raises InvalidCandidatesQuery as GET /allocation_candidates does (unknown names, in §3.6
    order) and UnknownTree.

    The topology is read as the engine reads it for the API: from this process's
    snapshot when it is current (candidates.sql.topology), else from the database.
    """
    with topology.in_use():
        return _explain(query, page, per_page, tree, max_candidates, cloud)


def _explain(query, page, per_page, tree, max_candidates, cloud):
    per_page = max(1, min(int(per_page), MAX_PER_PAGE))
    names = resolve(query)
    evaluation, stopped = engine.evaluate(query, names)
    notes = []
    if query.limit is not None:
        notes.append(reasons.limited(limit=query.limit))
    elif max_candidates is not None and max_candidates >= 0:
        notes.append(reasons.limited(max_candidates=max_candidates))
    root = trees_sql.root_of(tree) if tree is not None else None
    if root is not None:
        total, page, root_ids = 1, 1, [root]
    else:
        matching = trees_sql.roots_named_like(tree) if tree is not None else None
        if matching == []:
            raise UnknownTree(f"No resource provider with uuid {tree} or a name containing "
                              f"{tree}.")
        total = len(matching) if matching is not None else trees_sql.root_count()
        pages = max(1, math.ceil(total / per_page))
        page = max(1, min(int(page), pages))
        if stopped:
            root_ids = []
        elif matching is not None:
            root_ids = matching[(page - 1) * per_page:page * per_page]
        else:
            root_ids = trees_sql.roots_by_name((page - 1) * per_page, per_page)
    single = root is not None
    info = {"number": page, "per_page": 1 if single else per_page,
            "pages": 1 if single else max(1, math.ceil(total / per_page)),
            "trees": total}
    if stopped is not None:
        empty = {"trees": total, "fitting_trees": 0, "summary": [], "closest": []}
        return {"reasons": [reasons.stopped(stopped)] + notes, "page": info,
                "fitting_trees": 0, "trees": [], **({"cloud": empty} if cloud else {})}
    answer = {"reasons": notes, "page": info}
    if cloud and tree is None:
        every_root = trees_sql.roots_by_name(0, total)
        explainer = Page(evaluation, every_root, every_tree=True)
        everything = explainer.run(shown=set(every_root[(page - 1) * per_page:page * per_page]))
        answer["cloud"] = summarize(everything, whole=explainer.whole)
        found = everything[(page - 1) * per_page:page * per_page]
    else:
        found = Page(evaluation, root_ids).run()
    return {**answer, "fitting_trees": sum(1 for t in found if t["fits"]), "trees": found}


