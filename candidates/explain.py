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
        "reasons": [reason, ...],    # tree-wide: root_required, root_forbidden, in_tree,
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
                                     # not_in_aggregate, forbidden_aggregate, in_tree
        }]
      }]
    }

and a reason is ``{"kind", "group", "message", "details"}`` (candidates/reasons.py:
``kind`` for scripts, ``message`` for people, ``group`` the request group's suffix, ""
for the unsuffixed one, null when not about one group). A tree that does not fit
gets the reasons of the groups that have no partial candidate there (when every
group has some, the combination rules say why); a tree that fits gets no tree
reasons, only, per provider, why it cannot serve a group.
"""
import math

from candidates import candidate_set, combine, engine, reasons
from candidates.resolve import resolve
from candidates.sql import Scope, aggregates as agg_sql, trees as trees_sql
from providers.rules import capacity

PER_PAGE = 20
MAX_PER_PAGE = 100
COUNT_UP_TO = 1000        # candidates counted per tree
EXAMPLES_PER_KIND = 3     # refused combinations described per kind of reason
KEPT_PER_KIND = 50        # refused combinations remembered per tree and kind


class UnknownTree(LookupError):
    """explain(tree=...) names no provider."""


def explain(query, *, page=1, per_page=PER_PAGE, tree=None, max_candidates=-1):
    """Explain a request.CandidateQuery over one page of trees (see the module docstring).

    page: 1-based page number (clamped to the pages there are); per_page: trees per page
    (1..MAX_PER_PAGE); tree: uuid or name of a provider: explain its tree only;
    max_candidates: the deployment's [placement] max_allocation_candidates (only noted).
    Raises InvalidQuery as GET /allocation_candidates does (unknown names, in §3.6
    order) and UnknownTree.
    """
    per_page = max(1, min(int(per_page), MAX_PER_PAGE))
    names = resolve(query)
    evaluation, stopped = engine.evaluate(query, names)
    notes = []
    if query.limit is not None:
        notes.append(reasons.limited(limit=query.limit))
    elif max_candidates is not None and max_candidates >= 0:
        notes.append(reasons.limited(max_candidates=max_candidates))
    if tree is not None:
        root = trees_sql.root_of(tree)
        if root is None:
            raise UnknownTree(f"No resource provider with uuid or name {tree}.")
        total, page, root_ids = 1, 1, [root]
    else:
        total = trees_sql.root_count()
        pages = max(1, math.ceil(total / per_page))
        page = max(1, min(int(page), pages))
        root_ids = trees_sql.roots_by_name((page - 1) * per_page, per_page) if not stopped else []
    info = {"number": page, "per_page": per_page if tree is None else 1,
            "pages": max(1, math.ceil(total / per_page)) if tree is None else 1,
            "trees": total}
    if stopped is not None:
        return {"reasons": [reasons.stopped(stopped)] + notes, "page": info,
                "fitting_trees": 0, "trees": []}
    found = _Explainer(evaluation, root_ids).run()
    return {"reasons": notes, "page": info,
            "fitting_trees": sum(1 for t in found if t["fits"]), "trees": found}


class _Explainer:
    """One page of trees under one Evaluation; run() -> the "trees" list."""

    def __init__(self, evaluation, root_ids):
        self.evaluation = evaluation
        self.query = evaluation.query
        self.groups = evaluation.groups()
        self.root_ids = list(root_ids)
        names = evaluation.names
        self.trait_name = {i: n for n, i in names.traits.items()}
        self.aggregate_uuid = {i: u for u, i in names.aggregates.items()}
        self.class_name = {i: n for n, i in names.classes.items()}
        self.named = {}       # rp -> (uuid, name, parent uuid, root id)
        self.tree_rows = {}   # page root -> its providers in tree order

    # --- orchestration ---------------------------------------------------------------

    def run(self):
        if not self.root_ids:
            return []
        evaluation, groups, query = self.evaluation, self.groups, self.query
        facts = self.facts = engine.load_facts(Scope.trees(sorted(self.root_ids)), groups,
                                               evaluation, keep_rows=True)
        self.root_ok = evaluation.root_filter(facts)
        self.partials = [candidate_set.group_partials(g, facts, self.root_ok) for g in groups]
        self.filters = [candidate_set.group_filters(g, facts) for g in groups]
        self.fit_sets = {key: set(rps) for key, rps in facts.fits.items()}
        self.rows = {(row[0], row[1]): row[2:] for row in facts.loaded_rows}
        self.rejected = {}
        streams = dict(combine.anchor_streams(
            groups, self.partials, facts, query.isolate, query.same_subtree,
            engine.drops_same_tree(query), rejected=self._reject))
        page_roots = set(self.root_ids)
        # sharing providers that may serve the page's trees (and their roots, for names)
        self.sharing_for = {root: [] for root in self.root_ids}
        for rp in sorted(facts.sharing):
            for anchor in facts.anchors(rp):
                if anchor in page_roots and facts.root[rp] != anchor:
                    self.sharing_for[anchor].append(rp)
        extra = {rp for rps in self.sharing_for.values() for rp in rps}
        extra |= {facts.root[rp] for rp in extra}
        self._load_names(trees_sql.named_providers(sorted(self.root_ids), sorted(extra)))

        self.used_by = {}       # sharing rp -> anchors of other trees whose candidates use it
        pending = {}            # anchor -> its stream, not yet run to the end
        found = []
        for root in self.root_ids:
            out = _Tree(self, root)
            if root in streams:
                self._count(out, streams[root], pending)
            found.append(out)
        self._resolve_sharing([t for t in found if not t.fits], streams, pending)
        for out in found:
            if out.own:
                self._explain_providers(out)
            else:
                self._explain_tree(out)
        return [out.as_dict() for out in found]

    def _load_names(self, rows):
        """Keep named_providers rows: rp -> (uuid, name, parent uuid, root id), and the
        page trees' providers in tree order."""
        page_roots = set(self.root_ids)
        for rp, uuid, name, parent_uuid, root in rows:
            self.named[rp] = (uuid, name, parent_uuid, root)
            if root in page_roots:
                self.tree_rows.setdefault(root, []).append(rp)

    def name(self, rp):
        found = self.named.get(rp)
        return found[1] if found else f"#{rp}"

    def _reject(self, anchor, combo, problem):
        """combine's `rejected` hook: per anchor and kind of problem, how many refused
        combinations broke it, and the first few problems."""
        per_kind = self.rejected.setdefault(anchor, {})
        kept = per_kind.get(problem[0])
        if kept is None:
            per_kind[problem[0]] = [1, [problem]]
        else:
            kept[0] += 1
            if len(kept[1]) < KEPT_PER_KIND:
                kept[1].append(problem)

    def _count(self, out, stream, pending):
        """Consume the candidates built around out.root: count them (up to COUNT_UP_TO),
        note whether one uses the tree's own providers and which sharing providers of
        other trees they use."""
        facts, root = self.facts, out.root
        for allocations, mappings in stream:
            out.candidates += 1
            used = {rp for (rp, _), _ in allocations}
            for _, rps in mappings:
                used.update(rps)
            for rp in used:
                own_root = facts.root[rp]
                if own_root == root:
                    out.own = out.fits = True
                else:
                    out.sharing_used.add(rp)
                    self.used_by.setdefault(rp, set()).add(root)
            if out.candidates >= COUNT_UP_TO and out.fits:
                out.more = True
                pending[root] = stream
                return

    def _resolve_sharing(self, unresolved, streams, pending):
        """A tree that yields nothing of its own may still fit through its sharing
        providers, used by candidates of other trees: look for them in the page's
        unfinished streams, then in one batch over the other trees those providers
        share with (the engine's steps again, on that batch)."""
        facts = self.facts
        wanted = {}
        for out in unresolved:
            for rp in self.tree_rows.get(out.root, ()):
                if rp in facts.sharing:
                    wanted[rp] = out
        if not wanted:
            return
        for rp, users in list(self.used_by.items()):
            if rp in wanted:
                wanted.pop(rp).add_users(users)
        for anchor, stream in pending.items():
            if not wanted:
                return
            self._search(stream, anchor, wanted)
        if not wanted:
            return
        others = sorted({anchor for _, anchor in agg_sql.sharing_anchor_roots(
            sorted(wanted), Scope.everything())} - set(self.root_ids))
        if not others:
            return
        groups, query, evaluation = self.groups, self.query, self.evaluation
        batch = engine.load_facts(Scope.trees(others), groups, evaluation)
        root_ok = evaluation.root_filter(batch)
        partials = [candidate_set.group_partials(g, batch, root_ok) for g in groups]
        if not all(partials):
            return
        users = set()
        for anchor, stream in combine.anchor_streams(
                groups, partials, batch, query.isolate, query.same_subtree,
                engine.drops_same_tree(query)):
            if not wanted:
                break
            if not any(rp in wanted for per_anchor in partials
                       for partial in per_anchor[anchor] for rp in partial.providers):
                continue   # none of its partial candidates uses a wanted provider
            if self._search(stream, anchor, wanted):
                users.add(anchor)
        if users:
            self._load_names(trees_sql.named_providers([], sorted(users)))

    def _search(self, stream, anchor, wanted):
        """Run `stream` until its candidates have used every wanted sharing provider;
        those found tell their tree it fits. True if any was found."""
        hit = False
        for allocations, mappings in stream:
            used = {rp for (rp, _), _ in allocations}
            for _, rps in mappings:
                used.update(rps)
            for rp in used & wanted.keys():
                wanted.pop(rp).add_users({anchor})
                hit = True
            if not wanted:
                break
        return hit

    # --- why a tree yields nothing -----------------------------------------------------

    def _explain_tree(self, out):
        root = out.root
        if not self.root_ok(root):
            held = self.facts.traits_of(root)
            lacking = {self.trait_name[t] for t in self.evaluation.root_required
                       if t not in held}
            bad = {self.trait_name[t] for t in self.evaluation.root_forbidden if t in held}
            if lacking:
                out.reasons.append(reasons.root_lacks(lacking))
            if bad:
                out.reasons.append(reasons.root_has_forbidden(bad))
            return
        failing = [i for i, per_anchor in enumerate(self.partials) if root not in per_anchor]
        for index in failing:
            before = out.reason_count()
            group = self.groups[index]
            if not group.suffixed:
                self._unsuffixed(out, index)
            elif group.resourceless:
                self._resourceless(out, index)
            else:
                self._suffixed(out, index)
            if out.reason_count() == before:
                out.reasons.append(reasons.no_candidate(group.suffix))
        if failing:
            return
        if out.candidates:
            out.reasons.append(reasons.sharing_only({self.name(rp) for rp in out.sharing_used}))
            return
        self._combinations(out)

    def _explain_providers(self, out):
        """A tree that fits: only why some of its providers take no part in a group."""
        tree_reasons = out.reasons
        out.reasons = []   # the group explainers' tree-wide findings do not apply
        for index, group in enumerate(self.groups):
            if not group.suffixed:
                self._unsuffixed(out, index)
            elif not group.resourceless:
                self._suffixed(out, index)
            elif group.required or group.member_of:
                self._resourceless(out, index)
        out.reasons = tree_reasons

    def _considered(self, root, index):
        """The providers of the tree, then the sharing providers of other trees serving
        it that have inventory of one of the group's classes (others are beside the
        point for a group with resources)."""
        foreign = self.sharing_for.get(root, [])
        classes = [rc for rc, _ in self.groups[index].amounts]
        if classes:
            foreign = [rp for rp in foreign if any((rp, rc) in self.rows for rc in classes)]
        return list(self.tree_rows.get(root, ())) + foreign

    def _suffixed(self, out, index):
        """§4.3: one provider has all of the group's resources and passes its filters."""
        group, asked = self.groups[index], self.query.groups[index]
        suffix, facts = group.suffix, self.facts
        considered = self._considered(out.root, index)
        if group.in_tree_root is not None and group.in_tree_root != out.root:
            out.reasons.append(reasons.outside_in_tree(suffix, asked.in_tree))
            considered = [rp for rp in considered
                          if rp in facts.sharing and facts.root[rp] == group.in_tree_root]
        elif group.in_tree_root is not None:
            considered = [rp for rp in considered if facts.root[rp] == group.in_tree_root]
        for rp in considered:
            found = list(self._misfits(rp, index, report_missing=True))
            found += self._refusals(rp, index)
            out.add(rp, found)

    def _resourceless(self, out, index):
        """§4.3 resourceless: a provider passing the filters; Quirk Q5 without a positive
        one (in_tree is ignored)."""
        group = self.groups[index]
        if not group.required and not group.member_of:
            out.reasons.append(reasons.resourceless_unfiltered(group.suffix))
            return
        for rp in self._considered(out.root, index):
            out.add(rp, self._refusals(rp, index))

    def _unsuffixed(self, out, index):
        """§4.2: per class an eligible entry, then the traits of the chosen ones."""
        group, asked = self.groups[index], self.query.groups[index]
        facts, filters, root = self.facts, self.filters[index], out.root
        tree_root = group.in_tree_root
        if tree_root is not None and tree_root != root:
            out.reasons.append(reasons.outside_in_tree("", asked.in_tree))
            return
        if root in filters.in_f:
            out.reasons.append(reasons.forbidden_aggregate(
                "", self._aggregates(root, group.forbidden_aggregates), via_root=True))
        entries = [[] for _ in group.amounts]
        with_inventory = [0] * len(group.amounts)
        for rp in self._considered(root, index):
            if root not in candidate_set.entry_anchors(rp, facts, tree_root):
                continue
            found, fitting = [], []
            for i, (rc, n) in enumerate(group.amounts):
                if (rp, rc) in self.rows:
                    with_inventory[i] += 1
                if rp in self.fit_sets.get((rc, n), ()):
                    fitting.append(i)
            found += self._misfits(rp, index, report_missing=False)
            if fitting:
                refusal = candidate_set.entry_refusal(rp, facts.root[rp], root, filters)
                if refusal is None:
                    for i in fitting:
                        entries[i].append(rp)
                else:
                    found += self._entry_refusal(rp, index, refusal, root)
            out.add(rp, found)
        for i, (rc, n) in enumerate(group.amounts):
            if not entries[i]:
                out.reasons.append(reasons.no_provider("", self.class_name[rc], n,
                                                       with_inventory[i]))
        if not all(entries) or not group.required:
            return
        suppliers = sorted({rp for per_class in entries for rp in per_class})
        held = candidate_set.traits_of_all(facts, suppliers)
        supplier_names = {self.name(rp) for rp in suppliers}
        missing = False
        for any_of, asked_set in zip(group.required, asked.required_sets):
            if any_of.isdisjoint(held):
                missing = True
                out.reasons.append(reasons.traits_not_together("", asked_set, supplier_names))
        if not missing:
            out.reasons.append(reasons.no_choice_has_traits("", supplier_names))

    # --- provider reasons, from the engine's predicates ----------------------------------

    def _misfits(self, rp, index, report_missing):
        """Why the group's amounts do not fit rp (candidate_set.misfit on its row)."""
        group, asked = self.groups[index], self.query.groups[index]
        for (rc, n), (rc_name, _) in zip(group.amounts, asked.resources):
            if rp in self.fit_sets.get((rc, n), ()):
                continue
            row = self.rows.get((rp, rc))
            if row is None:
                if report_missing:
                    yield reasons.no_inventory(group.suffix, rc_name)
                continue
            used, total, reserved, ratio, min_unit, max_unit, step = row
            rule = candidate_set.misfit(n, used, capacity(total, reserved, ratio), min_unit,
                                        max_unit, step)
            if rule is not None:
                yield reasons.misfit(group.suffix, rc_name, n, rule, used, total, reserved,
                                     ratio, min_unit, max_unit, step)

    def _refusals(self, rp, index):
        """candidate_set.provider_refusals, named."""
        group, asked = self.groups[index], self.query.groups[index]
        suffix = group.suffix
        found = []
        for kind, which in candidate_set.provider_refusals(rp, self.filters[index]):
            if kind == candidate_set.FORBIDDEN_TRAIT:
                held = self.facts.traits_of(rp) & group.forbidden
                found.append(reasons.forbidden_trait(suffix, {self.trait_name[t] for t in held}))
            elif kind == candidate_set.FORBIDDEN_AGGREGATE:
                found.append(reasons.forbidden_aggregate(
                    suffix, self._aggregates(rp, group.forbidden_aggregates)))
            elif kind == candidate_set.NOT_IN_AGGREGATE:
                found.append(reasons.not_in_aggregate(suffix, asked.aggregates.any_of[which]))
            else:
                found.append(reasons.missing_trait(suffix, asked.required_sets[which]))
        return found

    def _entry_refusal(self, rp, index, refusal, anchor):
        """candidate_set.entry_refusal's answer for the unsuffixed group, named."""
        group, asked = self.groups[index], self.query.groups[index]
        facts, filters = self.facts, self.filters[index]
        if refusal == candidate_set.FORBIDDEN_TRAIT:
            held = facts.traits_of(rp) & group.forbidden
            return [reasons.forbidden_trait("", {self.trait_name[t] for t in held})]
        if refusal == candidate_set.NOT_IN_AGGREGATE:
            own_tree = facts.root[rp] == anchor
            return [reasons.not_in_aggregate("", asked.aggregates.any_of[i], root_too=own_tree)
                    for i, members in enumerate(filters.clause_members) if rp not in members]
        if rp in filters.in_f:
            return [reasons.forbidden_aggregate(
                "", self._aggregates(rp, group.forbidden_aggregates))]
        return []   # the anchor root is in F: said once for the tree

    def _aggregates(self, rp, ids):
        return {self.aggregate_uuid[a] for a in self.facts.aggregates.get(rp, ()) & ids}

    # --- why no combination holds --------------------------------------------------------

    def _combinations(self, out):
        """Every group has partial candidates here, yet no combination was kept: say
        what the refused combinations broke (combine.judge_for's problems)."""
        per_kind = self.rejected.get(out.root, {})
        for kind, (count, problems) in per_kind.items():
            shown, messages = [], set()
            for problem in problems:
                described = self._problem(problem)
                if described["message"] not in messages:
                    messages.add(described["message"])
                    shown.append(described)
            shown = shown[:EXAMPLES_PER_KIND]
            out.reasons.extend(shown)
            if count > len(shown):
                out.reasons.append(reasons.rejected_more(shown[0]["kind"], count - len(shown)))
        if not per_kind:
            out.reasons.append(reasons.no_candidate())

    def _problem(self, problem):
        kind, groups, name = problem[0], self.groups, self.name
        if kind == combine.ISOLATE:
            _, i, j, rp = problem
            return reasons.isolate(groups[i].suffix, groups[j].suffix, name(rp))
        if kind == combine.SAME_SUBTREE:
            _, k, providers = problem
            return reasons.same_subtree(self.query.same_subtree[k], [name(rp) for rp in providers])
        if kind == combine.CONSOLIDATED:
            _, (rp, rc), amount, rule = problem
            used, total, reserved, ratio, max_unit = self.facts.inventory[(rp, rc)]
            return reasons.combined(rule, self.class_name.get(rc, str(rc)), name(rp), amount,
                                    used, total, reserved, ratio, max_unit)
        _, providers = problem
        return reasons.same_tree([name(rp) for rp in providers])


class _Tree:
    """What the explainer found about one tree of the page."""

    def __init__(self, explainer, root):
        self.explainer = explainer
        self.root = root
        self.own = False        # a candidate built around it uses its own providers
        self.fits = False       # own, or its sharing providers serve other trees
        self.candidates = 0
        self.more = False
        self.sharing_used = set()
        self.shared_with = set()
        self.reasons = []
        self.by_provider = {}   # rp -> [reason]

    def add(self, rp, found):
        self.by_provider.setdefault(rp, []).extend(found)

    def add_users(self, anchors):
        """Candidates of the trees `anchors` use one of this tree's sharing providers."""
        self.fits = True
        self.shared_with |= set(anchors)

    def reason_count(self):
        return len(self.reasons) + sum(len(found) for found in self.by_provider.values())

    def as_dict(self):
        explainer = self.explainer
        named = explainer.named
        depth = {}
        providers = []
        for rp in explainer.tree_rows.get(self.root, ()):
            uuid, name, parent_uuid, root = named[rp]
            depth[uuid] = depth.get(parent_uuid, -1) + 1
            providers.append(self._provider(rp, uuid, name, parent_uuid, root, depth[uuid],
                                            False))
        for rp in explainer.sharing_for.get(self.root, []):
            if rp in self.by_provider:
                uuid, name, parent_uuid, root = named[rp]
                providers.append(self._provider(rp, uuid, name, parent_uuid, root, 0, True))
        uuid, name = named[self.root][:2]
        return {
            "root": {"uuid": uuid, "name": name},
            "fits": self.fits,
            "candidates": self.candidates,
            "more": self.more,
            "shared_with": [{"uuid": named[a][0], "name": named[a][1]}
                            for a in sorted(self.shared_with, key=explainer.name)],
            "reasons": self.reasons,
            "providers": providers,
        }

    def _provider(self, rp, uuid, name, parent_uuid, root, depth, foreign):
        named = self.explainer.named
        return {
            "uuid": uuid, "name": name,
            "parent_uuid": parent_uuid,
            "depth": depth,
            "root_uuid": named[root][0] if root in named else None,
            "sharing": rp in self.explainer.facts.sharing,
            "foreign": foreign,
            "reasons": self.by_provider.get(rp, []),
        }
