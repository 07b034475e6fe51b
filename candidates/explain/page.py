"""One page of trees under one Evaluation: the engine's facts, partial candidates and
candidates for the page's anchors, counted; whether each tree fits; sharing providers
looked for in the candidates of other trees. why.py then says why a tree does not fit.
"""
import weakref

from candidates import candidate_set, combine, engine
from candidates.explain import why
from candidates.sql import Scope, aggregates as agg_sql, trees as trees_sql

COUNT_UP_TO = 1000        # candidates counted per tree
KEPT_PER_KIND = 50        # refused combinations remembered per tree and kind


class Page:
    """One page of trees under one Evaluation; run() -> the "trees" list."""

    def __init__(self, evaluation, root_ids, every_tree=False):
        """every_tree: root_ids are every root of the cloud (no other tree's candidates
        can use a sharing provider of theirs)."""
        self.every_tree = every_tree
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
        self.entry_anchors = {}   # (rp, in_tree root) -> anchors (why._entry_anchors)
        self.shared_reasons = {}  # one reason said of many providers (why._not_in_aggregate)

    # --- orchestration ---------------------------------------------------------------

    def run(self, shown=None):
        """The "trees" list. `shown`: the roots whose explanation is shown in full (None:
        every tree); a tree that fits and is not shown is only said to fit (the
        cloud-wide summary counts it, nothing more), so why some of its providers take
        no part is not worked out."""
        if not self.root_ids:
            return []
        evaluation, groups, query = self.evaluation, self.groups, self.query
        facts = self.facts = engine.load_facts(Scope.trees(sorted(self.root_ids)), groups,
                                               evaluation, keep_rows=True)
        self.root_ok = evaluation.root_filter(facts)
        self.partials = [candidate_set.group_partials(g, facts, self.root_ok) for g in groups]
        self.filters = [candidate_set.group_filters(g, facts) for g in groups]
        self.fit_sets = {key: set(rps) for key, rps in facts.fits.items()}
        self.rows = facts.loaded_rows
        self.rejected = {}
        streams = dict(combine.anchor_streams(
            groups, self.partials, facts, query.isolate, query.same_subtree,
            engine.drops_same_tree(query), rejected=self._reject, examples=KEPT_PER_KIND))
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
            out = Tree(self, root)
            if root in streams:
                self._count(out, streams[root], pending)
            found.append(out)
        self._resolve_sharing([t for t in found if not t.fits], streams, pending)
        trees = []
        self.found = {}
        for out in found:
            whole = shown is None or out.root in shown
            if out.fits and not whole:
                trees.append(out.fitting())
                continue
            if out.own:
                why.explain_providers(self, out)
            else:
                why.explain_tree(self, out)
            trees.append(out.as_dict() if whole else out.summary())
            self.found[trees[-1]["root"]["uuid"]] = out
        return trees

    def whole(self, tree):
        """The full explanation of a tree run() gave in part (Tree.summary)."""
        return self.found[tree["root"]["uuid"]].as_dict()

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

    def _reject(self, anchor, refusals):
        """combine's `rejected` hook: per anchor and kind of problem, how many refused
        combinations broke it, and the first few problems."""
        self.rejected[anchor] = refusals

    def _count(self, out, stream, pending):
        """Consume the candidates built around out.root: count them (up to COUNT_UP_TO),
        note whether one uses the tree's own providers and which sharing providers of
        other trees they use."""
        facts, root = self.facts, out.root
        for allocations, mappings in stream:
            out.candidates += 1
            used = {rp for rp, _ in allocations}
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
        if not wanted or self.every_tree:
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
            used = {rp for rp, _ in allocations}
            for _, rps in mappings:
                used.update(rps)
            for rp in used & wanted.keys():
                wanted.pop(rp).add_users({anchor})
                hit = True
            if not wanted:
                break
        return hit


class Tree:
    """What the explainer found about one tree of the page."""

    def __init__(self, explainer, root):
        # the page keeps its trees (Page.found): a proxy, not a cycle, so that the page
        # and everything it read are freed when the answer is made, not by the collector
        self.explainer = weakref.proxy(explainer)
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

    def fitting(self):
        """What the cloud-wide summary needs of a tree that fits and is not shown."""
        uuid, name = self.explainer.named[self.root][:2]
        return {"root": {"uuid": uuid, "name": name}, "fits": True}

    def summary(self):
        """What the cloud-wide summary needs of a tree that does not fit and is not
        shown: its reasons, and only the providers that have some (Page.whole gives
        the rest when it is one of the closest)."""
        named = self.explainer.named
        uuid, name = named[self.root][:2]
        return {"root": {"uuid": uuid, "name": name}, "fits": False, "reasons": self.reasons,
                "providers": [{"uuid": named[rp][0], "reasons": found}
                              for rp, found in self.by_provider.items() if found]}

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
