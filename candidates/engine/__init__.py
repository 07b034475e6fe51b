"""The allocation candidates engine: orchestration only.

``find_candidates(query, ...)`` takes a request.CandidateQuery and returns a
Result (candidates + the data provider_summaries need). It

1. resolves names (resolve.py) and runs the steps of Placement's lazy
   evaluation order (§3.6, ``evaluate``), which report the first unknown name
   as a 400 unless an earlier step proves the answer empty; the steps are
   named functions, each callable on its own;
2. walks anchors (root providers) in ascending id order, in batches of
   root-id ranges that double in size; for each batch it loads the facts
   with a constant number of set-based queries (sql/; what they ask of the
   topology is answered by this process's snapshot of it when that is
   current, sql/topology.py), computes every
   group's partial candidates (candidate_set.py) and combines them
   (combine.py), stopping as soon as it has the candidates it needs; a batch that
   comes up short sends the next one past the trees with no room for the request
   (capacity.first_root_with_room). Without a limit there is one batch: the whole
   database;
3. applies limit / randomisation and loads the provider summaries.

It never sees a microversion: request.py turned those into flags.
"""
import random
from collections import Counter, namedtuple
from dataclasses import dataclass, field
from functools import cached_property

from django.db import DatabaseError

from placement_site.ops import metrics
from candidates import candidate_set, combine
from candidates.exceptions import InvalidCandidatesQuery
from candidates.resolve import resolve
from candidates.sql import Scope, aggregates as agg_sql, capacity, links, summaries
from candidates.sql import traits as trait_sql
from candidates.sql import topology, trees

# The fewest root ids a limited walk's first batch spans. Measured at limit=5 (PostgreSQL,
# in-process, topology from the snapshot / from the database): nested 1,000 trees with
# their roots created first 3.7 / 5.5 ms at 64, 2.3 / 3.8 at 32, 1.9 / 3.0 at 16; trees
# made by load.py (root ids spaced by the children) equal at all three; flat 1,000 after
# bench.py's claims 1.9 / 3.4 at 64, 1.6 / 2.7 at 16, 4.2 / 6.8 at 8 (its first hosts are
# full: a batch too small needs more).
FIRST_BATCH_ROOT_IDS = 16


@dataclass
class Result:
    """candidates: [(allocations, mappings)] (see combine.py);
    providers: trees.providers rows of the summarised providers;
    inventories: their inventories as capacity.inventory_groups pairs ((rc_id, used,
    total, ...), [rp_id, ...]);
    traits: rows (rp id, trait name), None when summaries show no traits;
    uuids: rp id -> uuid for every provider the candidates mention;
    class_names: rc id -> name of every class in candidates and inventories.
    With a window (find_candidates), candidates are that slice of the answer and
    total: the number of candidates in the whole answer; trees: the tree (root id,
    candidate_tree) of each candidate kept; tree_counts: root id -> its number of
    candidates in the whole answer (uuids then also covers these roots)."""

    candidates: list = field(default_factory=list)
    providers: list = field(default_factory=list)
    inventories: list = field(default_factory=list)
    traits: list = None
    uuids: dict = field(default_factory=dict)
    class_names: dict = field(default_factory=dict)
    total: int = 0
    trees: list = None
    tree_counts: dict = None


def find_candidates(query, *, whole_trees=True, all_classes=True, with_traits=True,
                    randomize=False, max_candidates=-1, breadth_first=False, window=None):
    """Evaluate a CandidateQuery.

    whole_trees: summaries cover every provider of the trees involved (1.29+),
    else only providers in allocations; all_classes: summaries show every class
    (1.27+), else only the requested ones; with_traits: summaries list traits.
    randomize / max_candidates: the [placement] options of the same names;
    breadth_first: allocation_candidates_generation_strategy = breadth-first.
    window: None, or (start, stop): keep and summarise only that slice of the answer
    (after limit and randomisation), as if the answer were cut to it (§4.7); the UI's
    pages. Raises InvalidCandidatesQuery for unknown resource classes or traits (when
    reached).
    """
    args = (query, whole_trees, all_classes, with_traits, randomize, max_candidates,
            breadth_first, window)
    with topology.optimistic_use() as use:
        if use is not None:
            # the settled snapshot, its token read along with the first usage
            try:
                result = _find(*args)
            except DatabaseError:
                raise
            except Exception:
                # an unknown name (InvalidCandidatesQuery), or what a stale snapshot breaks: a
                # provider the inventories name that it does not know. Only the first is
                # an answer, and only if the snapshot was current.
                if use.current():
                    raise
            else:
                if use.current():
                    return result
    # no settled snapshot, or it was not current: read the token first
    with topology.in_use():
        return _find(*args)


def _find(query, whole_trees, all_classes, with_traits, randomize, max_candidates,
          breadth_first, window):
    names = resolve(query)
    evaluation, excluded = evaluate(query, names)
    if excluded is not None:
        return Result(trees=[] if window else None, tree_counts={} if window else None)

    limit = query.limit
    drop_same_tree = drops_same_tree(query)
    cap = max_candidates if max_candidates is not None and max_candidates >= 0 else None
    # Below 1.29 with trees in the database, the summaries of a limited answer also show
    # providers of the candidates left out (§4.7), so every candidate is generated.
    if not randomize and limit is not None and not drop_same_tree:
        cap = limit if cap is None else min(cap, limit)
    found, roots, batches = _generate(evaluation, cap, drop_same_tree, breadth_first,
                                      every_class=all_classes, trait_names=with_traits)
    metrics.observe_candidate_work(len(roots), cap is not None and len(found) >= cap)
    generated = found
    if randomize:
        if limit is not None and limit < len(found):
            found = random.sample(found, limit)
        else:
            random.shuffle(found)
    elif limit is not None:
        found = found[:limit]
    total, tree_of = len(found), None
    if window is not None:
        sharing = evaluation.sharing
        tree_of = [candidate_tree(candidate, roots, sharing) for candidate in found]
        start, stop = window
        found = found[start:stop]
    if not found:
        return Result(total=total, trees=[] if window else None,
                      tree_counts=Counter(tree_of) if window else None)
    result = _with_summaries(found, generated, roots, batches, query, names, whole_trees,
                             all_classes, with_traits)
    result.total = total
    if window is not None:
        result.trees = tree_of[start:stop]
        result.tree_counts = Counter(tree_of)
        unnamed = set(result.trees) - result.uuids.keys()
        if unnamed:
            result.uuids.update(summaries.uuids(sorted(unnamed)))
    return result


def candidate_tree(candidate, roots, sharing):
    """The tree (root id) a candidate is built around: that of its providers which are
    not sharing providers (they all have one root, §4.1 "Anchor"), else, for a candidate
    made of sharing providers only, that of its first provider."""
    allocations, mappings = candidate
    first = None
    for rp, _ in allocations:
        if rp not in sharing:
            return roots[rp]
        first = rp if first is None else first
    for _, rps in mappings:
        for rp in rps:
            if rp not in sharing:
                return roots[rp]
            first = rp if first is None else first
    return roots[first]


# --- the steps of §3.6 ------------------------------------------------------------------
#
# One evaluation in Placement's order serves every request. A step is a named function
# step(evaluation, group) (group: a request.RequestGroup; None for the request-wide
# steps) that raises the 400 of an unknown name, or returns a short reason when it proves
# there can be no candidate, or returns None. `costly` steps query the whole database:
# their only use on a request is to decide whether an unknown name further on is
# reported (Quirk Q4), so they run when the request names something unknown (or when
# asked, thorough=True); otherwise generation finds the same emptiness batch by batch.

Step = namedtuple("Step", "name check costly")


class Evaluation:
    """One request under evaluation: the CandidateQuery, its resolve.Names, and what the
    steps compute on the way (compiled groups, sharing providers, the root filter over
    the whole database), each computed once."""

    def __init__(self, query, names):
        self.query = query
        self.names = names
        self.stopped_at = None   # (Step, RequestGroup or None) of evaluate()'s reason
        self._compiled = {}

    @cached_property
    def root_required(self):
        return frozenset(self.names.traits[t] for t in self.query.root_required)

    @cached_property
    def root_forbidden(self):
        return frozenset(self.names.traits[t] for t in self.query.root_forbidden)

    def root_filter(self, facts):
        """root_required as a predicate on the anchors `facts` know the traits of."""
        return candidate_set.root_filter(self.root_required, self.root_forbidden, facts)

    @cached_property
    def whole_root_filter(self):
        """root_required as a predicate on every root of the database."""
        everything = Scope.everything()
        facts = candidate_set.Facts(holds_root=everything.holds_root)
        trait_ids = self.root_required | self.root_forbidden
        if trait_ids:
            _add_rows(facts.traits, trait_sql.provider_traits(trait_ids, everything))
        return self.root_filter(facts)

    @property
    def sharing(self):
        """Ids of every sharing provider (read with the names)."""
        return self.names.sharing

    def compiled(self, group):
        """`group` with every name resolved to an id (a candidate_set.Group). Its names
        must exist and its in_tree provider too (the steps check them first)."""
        found = self._compiled.get(group.suffix)
        if found is None:
            found = self._compiled[group.suffix] = _compile(group, self.names)
        return found

    def groups(self):
        return [self.compiled(group) for group in self.query.groups]


def _compile(group, names):
    in_tree_root = None
    if group.in_tree and not group.resourceless:
        in_tree_root = names.providers[group.in_tree]
    traits = names.traits
    return candidate_set.Group(
        suffix=group.suffix,
        amounts=tuple((names.classes[name], n) for name, n in group.resources),
        required=tuple(frozenset(traits[t] for t in names_) for names_ in group.required_sets),
        forbidden=frozenset(traits[t] for t in group.forbidden),
        member_of=_member_of_clauses(group, names),
        forbidden_aggregates=frozenset(names.aggregates[a] for a in group.aggregates.forbidden
                                       if a in names.aggregates),
        in_tree_root=in_tree_root,
    )


def _member_of_clauses(group, names):
    """Positive member_of clauses as sets of aggregate ids (unknown aggregates left out)."""
    return tuple(frozenset(names.aggregates[a] for a in clause if a in names.aggregates)
                 for clause in group.aggregates.any_of)


def _unknown_traits(trait_names, names):
    return sorted(set(trait_names) - names.traits.keys())


def _unknown_classes(group, names):
    return [name for name, _ in group.resources if name not in names.classes]


def _names_unknown(query, names):
    """Does the request name a trait or resource class that does not exist?"""
    return bool(_unknown_traits(query.root_required | query.root_forbidden, names)
                or any(_unknown_classes(group, names)
                       or _unknown_traits(group.traits.names(), names)
                       for group in query.groups))


def _raise_unknown_traits(trait_names, names):
    missing = _unknown_traits(trait_names, names)
    if missing:
        raise InvalidCandidatesQuery(f"No such trait(s): {', '.join(missing)}.")


def root_traits_known(evaluation, group=None):
    """§3.6 step 1: the root_required traits exist."""
    query = evaluation.query
    _raise_unknown_traits(query.root_required | query.root_forbidden, evaluation.names)


def some_root_passes(evaluation, group=None):
    """§3.6 step 1: some root provider satisfies root_required."""
    query = evaluation.query
    if not (query.root_required or query.root_forbidden):
        return None
    root_ok = evaluation.whole_root_filter
    if not any(root_ok(root) for root in trees.root_ids()):
        return "no root provider satisfies root_required"
    return None


def classes_known(evaluation, group):
    """§3.6 step 2.1: the group's resource classes exist."""
    missing = _unknown_classes(group, evaluation.names)
    if missing:
        raise InvalidCandidatesQuery("Invalid resource class in resources parameter: "
                                     f"No such resource class {missing[0]}.")


def aggregates_known(evaluation, group):
    """§3.6 step 2.2, by name: every positive member_of clause names an aggregate that
    exists (nothing is a member of an unknown one)."""
    if not all(_member_of_clauses(group, evaluation.names)):
        return f"member_of{group.suffix}: no aggregate of a clause exists"
    return None


def member_of_satisfiable(evaluation, group):
    """§3.6 step 2.2: some provider is a member of every positive member_of clause."""
    clauses = _member_of_clauses(group, evaluation.names)
    if not clauses:
        return None
    members, ids = {}, set().union(*clauses)
    if ids:
        _add_rows(members, agg_sql.provider_aggregates(ids, Scope.everything()))
    if not any(candidate_set.in_aggregates(aggs, clauses) for aggs in members.values()):
        return f"member_of{group.suffix}: no provider is a member of every clause"
    return None


def traits_known(evaluation, group):
    """§3.6 step 2.3: the group's required and forbidden traits exist."""
    _raise_unknown_traits(group.traits.names(), evaluation.names)


def in_tree_exists(evaluation, group):
    """§3.6 step 2.4: the in_tree provider exists (even for a resourceless group, which
    otherwise ignores in_tree: Quirk Q5)."""
    if group.in_tree and group.in_tree not in evaluation.names.providers:
        return f"in_tree{group.suffix}: no such provider"
    return None


def amounts_fit(evaluation, group):
    """§3.6 step 2.5: every amount fits some provider (of the in_tree tree, if given)."""
    compiled = evaluation.compiled(group)
    scope = (Scope.tree(compiled.in_tree_root) if compiled.in_tree_root is not None
             else Scope.everything())
    for (name, amount), key in zip(group.resources, compiled.amounts):
        if not capacity.providers_with_capacity([key], scope)[key]:
            return f"resources{group.suffix}: no provider fits {name}:{amount}"
    return None


def has_partials(evaluation, group):
    """§3.6 step 2.6: the group has partial candidates (§4.2, §4.3) in the database."""
    compiled = evaluation.compiled(group)
    facts = load_facts(Scope.everything(), [compiled], evaluation)
    if not candidate_set.group_partials(compiled, facts, evaluation.whole_root_filter):
        return f"resources{group.suffix}: no provider or set of providers satisfies the group"
    return None


REQUEST_STEPS = (
    Step("root_required traits exist", root_traits_known, costly=False),
    Step("a root provider satisfies root_required", some_root_passes, costly=True),
)
GROUP_STEPS = (
    Step("resource classes exist", classes_known, costly=False),
    Step("member_of aggregates exist", aggregates_known, costly=False),
    Step("a provider is in every member_of clause", member_of_satisfiable, costly=True),
    Step("traits exist", traits_known, costly=False),
    Step("in_tree provider exists", in_tree_exists, costly=False),
    Step("every amount fits a provider", amounts_fit, costly=True),
    Step("the group has partial candidates", has_partials, costly=True),
)


def evaluate(query, names, thorough=None):
    """Run the steps of §3.6 in order: request-wide, then each group's.

    Returns (evaluation, reason): reason is None when no step excluded everything
    (generation follows), else the first step's reason. Raises InvalidCandidatesQuery for the first
    unknown name reached. thorough: run the costly steps too (None: only when the
    request names something unknown, the only case where they change the answer).
    """
    evaluation = Evaluation(query, names)
    if thorough is None:
        thorough = _names_unknown(query, names)
    plan = [(step, None) for step in REQUEST_STEPS]
    plan += [(step, group) for group in query.groups for step in GROUP_STEPS]
    for step, group in plan:
        if step.costly and not thorough:
            continue
        reason = step.check(evaluation, group)
        if reason is not None:
            evaluation.stopped_at = (step, group)
            return evaluation, reason
    return evaluation, None


# --- generation -------------------------------------------------------------------------


def drops_same_tree(query):
    """Below 1.29 with a provider tree anywhere in the database, candidates using two
    providers of one tree are dropped (§4.5, Quirk Q7)."""
    return not query.nested_aware and trees.any_provider_has_parent()


def _generate(evaluation, cap, drop_same_tree, breadth_first, every_class=False,
              trait_names=False):
    """Distinct candidates in anchor order (breadth_first: one per anchor in turn), at
    most `cap` (None: all); rp -> root; and the Facts of the batches read.
    drop_same_tree: below 1.29, drop candidates using two providers of one tree;
    every_class, trait_names: what the batches read for the summaries (see load_facts)."""
    query, groups = evaluation.query, evaluation.groups()
    unsuffixed_tree = next((g.in_tree_root for g in groups
                            if not g.suffixed and g.in_tree_root is not None), None)
    found, seen, roots, batches = [], set(), {}, []
    # taking turns between anchors needs all of them in one batch
    for scope, by_id in _scopes(None if breadth_first else cap, unsuffixed_tree,
                                evaluation.names.root_bounds, _room_finder(evaluation),
                                lambda: len(found)):
        facts = load_facts(scope, groups, evaluation, by_id=by_id, every_class=every_class,
                           trait_names=trait_names)
        roots.update(facts.root)
        batches.append(facts)
        root_ok = evaluation.root_filter(facts)
        partials = []
        for group in groups:
            per_anchor = candidate_set.group_partials(group, facts, root_ok)
            if not per_anchor:
                break
            partials.append(per_anchor)
        else:
            # Only candidates built purely from sharing providers can repeat under
            # several anchors; without sharing providers there is nothing to dedupe.
            dedupe = bool(facts.sharing)
            stream = combine.candidates(groups, partials, facts, query.isolate,
                                        query.same_subtree, drop_same_tree, breadth_first)
            if cap is None and not dedupe:
                found.extend(stream)
                continue
            for candidate in stream:
                if dedupe:
                    if candidate in seen:
                        continue
                    seen.add(candidate)
                found.append(candidate)
                if cap is not None and len(found) >= cap:
                    return found, roots, batches
    return found, roots, batches


# A batch spanning at most this share of the root ids names its providers by id (see
# load_facts); a larger one reads the link tables whole, which is then cheaper than
# probing the indexes once per provider.
BY_ID_UP_TO_SHARE = 0.1


def _room_finder(evaluation):
    """first_root_with_room(start) for this request's amounts (the smallest of each
    class), or None when a tree's room does not decide whether it can anchor a
    candidate: sharing providers may supply any class, an in_tree group draws on a tree
    of its own, and a request of resourceless groups asks for no room."""
    query = evaluation.query
    if evaluation.sharing or any(group.in_tree for group in query.groups):
        return None
    smallest = {}
    for group in evaluation.groups():
        for rc, n in group.amounts:
            smallest[rc] = min(n, smallest.get(rc, n))
    if not smallest:
        return None
    amounts = list(smallest.items())
    return lambda start: capacity.first_root_with_room(start, amounts)


def _scopes(cap, tree_root, root_bounds, first_root_with_room=None, found_so_far=None):
    """Batches of anchors, each as (scope, by_id) (see load_facts): all at once
    without a cap, else growing root-id ranges between root_bounds (lowest, highest
    root id, resolve.Names). first_root_with_room(start): where to start the next batch
    of a limited request, past trees that have no room for it (None: no such test).
    found_so_far(): the candidates the batches gave so far; from their yield per root
    id, a batch reaches as far as the cap seems to lie, and the rest of the roots come
    in one batch when the cap seems to lie past half of them."""
    if tree_root is not None:
        yield Scope.tree(tree_root), True
        return
    if cap is None:
        yield Scope.everything(), False
        return
    low, high = root_bounds
    if low is None:
        return
    # as many root ids as candidates wanted (one per tree when all qualify); the batches
    # that follow double until the cap is reached
    size = max(FIRST_BATCH_ROOT_IDS, cap)
    if low + size > high:
        yield Scope.everything(), False   # one batch would cover every root anyway
        return
    start, span = low, high - low + 1
    while start <= high:
        yield Scope.roots_between(start, start + size), size <= span * BY_ID_UP_TO_SHARE
        start += size
        size *= 2
        if first_root_with_room is not None and start <= high:
            # the batch did not give enough: skip the trees with no room
            start = first_root_with_room(start)
            if start is None:
                return
        found = found_so_far() if found_so_far is not None else 0
        if found and start <= high:
            needed = (cap - found) * (start - low) / found * REACH_MARGIN
            if needed >= (high - start + 1) * REST_AT_ONCE_SHARE:
                # cheaper read at once than in more batches, each with its own statements
                yield Scope.roots_between(start, high + 1), False
                return
            size = max(size, int(needed))


# A limited walk reads every root left in one batch once the cap seems to lie past this
# share of them (measured on nested 1,000 trees, limit=1000: the rest at once 25-28 ms,
# in two more doubling batches 43-52), and sizes its batches with this margin over the
# root ids the yield so far says the cap needs.
REST_AT_ONCE_SHARE = 0.5
REACH_MARGIN = 1.25


# Below this many providers of interest, the whole-database batch looks them up by id;
# above it, reading the provider table once is cheaper than a long id list.
LOOKUP_BY_ID_UP_TO = 200


def load_facts(scope, groups, evaluation, keep_rows=False, by_id=True, every_class=False,
               trait_names=False):
    """Facts about the providers of `scope` plus every sharing provider, for `groups`
    (candidate_set.Group) of the request under `evaluation`; a constant number of
    queries. keep_rows: also keep every inventory row read (facts.loaded_rows), for the
    explainer's numbers. by_id: for a range of trees, read its providers first and ask
    for the rest by their ids (a small share of a large cloud). every_class: read the
    inventories of `scope` of every class, not only the requested ones: provider
    summaries show them all (1.27+), and one read serves both. trait_names: a batch named
    by id (a limited request's, sized to what it returns) reads every trait of its
    providers with its name (facts.trait_names), the filters taking theirs from them:
    summaries show them (1.17+). A batch of the whole database reads only the request's
    traits: its summaries may show a few providers of many."""
    facts = candidate_set.Facts(holds_root=scope.holds_root)
    if keep_rows:
        facts.loaded_rows = []
    amounts = {key for group in groups for key in group.amounts}
    trait_ids = set(evaluation.root_required | evaluation.root_forbidden)
    sharing_ids = evaluation.sharing
    aggregate_ids = set()
    for group in groups:
        for names_ in group.required:
            trait_ids |= names_
        trait_ids |= group.forbidden
        for clause in group.member_of:
            aggregate_ids |= clause
        aggregate_ids |= group.forbidden_aggregates
    scopes = [scope]
    if sharing_ids:
        scopes.append(Scope.providers(sharing_ids))
        facts.sharing = set(sharing_ids)
    fits, inventory = {}, facts.inventory
    want_inventory = len(groups) > 1   # only consolidation across groups needs it
    class_ids = {rc for rc, _ in amounts}
    provider_rows = {}   # scope -> its trees.providers rows, when read first
    positions = bool(evaluation.query.same_subtree)
    for index, where in enumerate(scopes):
        if by_id and where.kind in ("range", "roots"):
            # Read the batch's providers first and name them by id below: PostgreSQL
            # then reaches their rows through the provider indexes, where a range of
            # trees makes it scan every row of a link table (cost growing with the cloud).
            rows = provider_rows[index] = trees.providers(where, positions)
            where = Scope.providers([row[0] for row in rows])
        every = every_class and index == 0
        groups = capacity.inventory_groups(where, rc_ids=None if every else class_ids)
        if index == 0:
            facts.inventory_groups = groups
            facts.every_class = every
        if keep_rows:
            facts.loaded_rows.extend(capacity.rows_of(groups))
        for key, rps in capacity.fitting_groups(amounts, groups).items():
            fits.setdefault(key, []).extend(rps)
        if want_inventory:
            for (rc, used, total, reserved, ratio, _, max_unit, _), rps in groups:
                shown = (used, total, reserved, ratio, max_unit)
                for rp in rps:
                    inventory[(rp, rc)] = shown
        if trait_names and index in provider_rows:
            trait_rows, aggregate_rows, facts.trait_names = (
                links.provider_traits_and_aggregates(trait_ids, aggregate_ids, where,
                                                     trait_names=True))
        else:
            trait_rows, aggregate_rows = links.provider_traits_and_aggregates(
                trait_ids, aggregate_ids, where)
        _add_rows(facts.traits, trait_rows)
        _add_rows(facts.aggregates, aggregate_rows)
    if sharing_ids:
        # a sharing provider inside the scope was seen twice
        facts.fits = {key: sorted(set(rps)) for key, rps in fits.items()}
        for rp, anchor in agg_sql.sharing_anchor_roots(sharing_ids, scope):
            facts.sharing_anchors.setdefault(rp, set()).add(anchor)
    else:
        facts.fits = {key: sorted(rps) for key, rps in fits.items()}
    _add_positions(facts, scopes, provider_rows, positions)
    return facts


def _add_positions(facts, scopes, provider_rows, positions):
    """Root (and, with positions, MPTT position: same_subtree needs it) of every
    provider the facts mention. provider_rows: index in scopes -> the providers rows
    already read."""
    root, position = facts.root, facts.position
    for index, scope in enumerate(scopes):
        if index in provider_rows:
            rows = facts.tree_rows = provider_rows[index]
        elif scope.kind == "all":
            mentioned = set(facts.traits)
            mentioned.update(facts.aggregates)
            for rps in facts.fits.values():
                mentioned.update(rps)
            if len(mentioned) <= LOOKUP_BY_ID_UP_TO:
                scope = Scope.providers(sorted(mentioned))
                rows = trees.providers(scope, positions)
            else:
                rows = facts.every_provider = facts.tree_rows = trees.providers(
                    scope, positions)
        else:
            rows = trees.providers(scope, positions)
            if index == 0:   # every provider of the batch's trees
                facts.tree_rows = rows
        roots, positions_ = trees.tree_index(scope, rows, positions)   # rows of scope
        root.update(roots)
        if positions:
            position.update(positions_)


def _add_rows(target, rows):
    """rows (rp, value) -> target[rp] = {value, ...}."""
    for rp, value in rows:
        found = target.get(rp)
        if found is None:
            target[rp] = {value}
        else:
            found.add(value)


# --- summaries --------------------------------------------------------------------------


def _with_summaries(found, generated, roots, batches, query, names, whole_trees,
                    all_classes, with_traits):
    """Load what provider_summaries show for the providers of `found` (the candidates
    kept out of `generated`): every provider of their trees (whole_trees), else the
    providers in allocations of `generated` within the trees of `found` (§4.6, §4.7).
    `batches`: the Facts of the batches read; their provider and inventory rows are
    reused when they cover every provider shown."""
    in_allocations = {rp for allocations, _ in found for rp, _ in allocations}
    if whole_trees:
        selected, by_column = {roots[rp] for rp in in_allocations}, 3   # root id
        scope = Scope.trees(sorted(selected))
    else:
        if len(generated) > len(found):
            kept_roots = {roots[rp] for rp in in_allocations}
            in_allocations = {rp for allocations, _ in generated for rp, _ in allocations
                              if roots[rp] in kept_roots}
        selected, by_column = in_allocations, 0   # provider id
        scope = Scope.providers(sorted(selected))
    requested = {names.classes[n] for n in query.requested_class_names()}
    read = [facts for facts in batches if facts.tree_rows is not None]
    known = [row for facts in read for row in facts.tree_rows]
    providers = [row for row in known if row[by_column] in selected]
    if len({row[by_column] for row in providers}) < len(selected):
        # some provider shown lies outside the trees the batches read
        providers = trees.providers(scope, positions=False)
        # by id: see load_facts
        scope = Scope.providers([row[0] for row in providers])
        inventories = capacity.shown_groups(scope, rc_ids=None if all_classes else requested)
        traits = summaries.trait_names(scope) if with_traits else None
    else:
        if len(read) > 1:
            providers.sort()   # in id order, as trees.providers reads them
        shown = None   # None: every provider read is shown
        if len(providers) < len(known):
            shown = {row[0] for row in providers}
        if not any(facts.every_provider is not None for facts in read):
            scope = Scope.providers([row[0] for row in providers])   # by id: see load_facts
        elif len(providers) * 10 >= len(known) * 6:
            # most providers are involved: reading every row beats a long id list
            scope = Scope.everything()
        # the inventories were read with the facts: every class's when all_classes
        inventories = _only_groups(shown, [group for facts in read
                                           for group in facts.inventory_groups])
        if all_classes and not all(facts.every_class for facts in read):
            others = capacity.shown_groups(scope, exclude_rc_ids=requested)
            inventories = inventories + _only_groups(shown, others)
        traits = None
        if with_traits:
            if all(facts.trait_names is not None for facts in read):
                traits = [row for facts in read for row in facts.trait_names]
            else:
                traits = summaries.trait_names(scope)
            traits = _only(shown, traits)
    uuids = {row[0]: row[1] for row in providers}
    if any(group.resourceless for group in query.groups):
        # a resourceless group maps a provider that may hold no allocation of the
        # candidate (every other group's providers are in its allocations, named above)
        missing = ({rp for _, mappings in found for _, rps in mappings for rp in rps}
                   - uuids.keys())
        if missing:
            uuids.update(summaries.uuids(sorted(missing)))
    class_names = {rc: name for name, rc in names.classes.items()}
    unnamed = {key[0] for key, _ in inventories} - class_names.keys()
    if unnamed:
        class_names.update(summaries.class_names(sorted(unnamed)))
    return Result(candidates=found, providers=providers, inventories=inventories,
                  traits=traits, uuids=uuids, class_names=class_names)


def _only_groups(providers, groups):
    """The inventory groups narrowed to these providers (None: all), empty ones dropped."""
    if providers is None:
        return groups
    narrowed = [(key, [rp for rp in rps if rp in providers]) for key, rps in groups]
    return [(key, rps) for key, rps in narrowed if rps]


def _only(providers, rows):
    """The rows (rp, ...) of these providers (None: all rows)."""
    if providers is None:
        return rows
    return [row for row in rows if row[0] in providers]
