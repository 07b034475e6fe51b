"""The allocation candidates engine: orchestration only.

``find_candidates(query, ...)`` takes a request.CandidateQuery and returns a
Result (candidates + the data provider_summaries need). It

1. resolves names (resolve.py) and runs the steps of Placement's lazy
   evaluation order (§3.6, steps.py), which report the first unknown name
   as a 400 unless an earlier step proves the answer empty;
2. generates the candidates (batches.py): anchors (root providers) walked in
   ascending id order, in batches of root-id ranges that double in size; for each
   batch it loads the facts with a constant number of set-based queries (facts.py,
   sql/; what they ask of the topology is answered by this process's snapshot of it
   when that is current, sql/topology.py), computes every group's partial
   candidates (candidate_set.py) and combines them (combine.py), stopping as soon
   as it has the candidates it needs. Without a limit there is one batch: the
   whole database;
3. applies limit / randomisation: find_answer() returns that Answer;
4. loads the provider summaries (summaries.py) of the answer, or of the part of it a
   caller chose (summarise()). find_candidates() does both for the API; the operator
   console's pages arrange the answer and summarise the page they show.

It never sees a microversion: request.py turned those into flags.
"""
import random
from dataclasses import dataclass, field

from django.db import DatabaseError

from foundation.ops import metrics
from candidates.engine.batches import drops_same_tree, generate
from candidates.engine.facts import load_facts
from candidates.engine.steps import Evaluation, evaluate
from candidates.engine.summaries import candidate_tree, with_summaries
from candidates.resolve import resolve
from candidates.sql import topology

__all__ = ["Answer", "Evaluation", "Result", "drops_same_tree", "evaluate",
           "find_answer", "find_candidates", "load_facts", "summarise"]


@dataclass
class Answer:
    """The answer before its summaries: what find_answer() found, for a caller that
    shows part of it (summarise() then summarises that part).

    candidates: after limit and randomisation; roots: rp id -> root id of every
    provider they use; sharing: the sharing providers' ids; batches: the Facts of the
    batches read (their inventory rows, for a caller that weighs candidates);
    generated: every candidate generated before the limit (summaries below 1.29 show
    their providers too); query, names, summary: what the summaries are made for."""

    candidates: list
    roots: dict
    sharing: frozenset
    batches: list
    generated: list = field(default_factory=list)
    query: object = None
    names: object = None
    summary: tuple = (True, True, True)   # whole_trees, all_classes, with_traits

    def tree_of(self, candidate):
        """The tree (root id) the candidate is built around."""
        return candidate_tree(candidate, self.roots, self.sharing)


@dataclass
class Result:
    """candidates: [(allocations, mappings)] (see combine.py);
    providers: sql.rows.ProviderRow of the summarised providers;
    inventories: their inventories as capacity.inventory_groups pairs (InventoryKey,
    [rp_id, ...]);
    traits: rows (rp id, trait name), None when summaries show no traits;
    uuids: rp id -> uuid for every provider the candidates mention;
    class_names: rc id -> name of every class in candidates and inventories."""

    candidates: list = field(default_factory=list)
    providers: list = field(default_factory=list)
    inventories: list = field(default_factory=list)
    traits: list = None
    uuids: dict = field(default_factory=dict)
    class_names: dict = field(default_factory=dict)


def find_candidates(query, *, whole_trees=True, all_classes=True, with_traits=True,
                    randomize=False, max_candidates=-1, breadth_first=False):
    """The API's answer to a CandidateQuery: every candidate find_answer() finds, with
    its provider summaries, both read against one view of the topology. The options are
    find_answer()'s.
    Raises InvalidCandidatesQuery for unknown resource classes or traits (when reached)."""
    return _consistently(lambda: _summarise(_answer(
        query, (whole_trees, all_classes, with_traits), randomize, max_candidates,
        breadth_first)))


def find_answer(query, *, whole_trees=True, all_classes=True, with_traits=True,
                randomize=False, max_candidates=-1, breadth_first=False):
    """Evaluate a CandidateQuery: the Answer, without summaries (None when the query is
    proven empty before any candidate is sought).

    whole_trees: summaries cover every provider of the trees involved (1.29+),
    else only providers in allocations; all_classes: summaries show every class
    (1.27+), else only the requested ones; with_traits: summaries list traits.
    randomize / max_candidates: the [placement] options of the same names;
    breadth_first: allocation_candidates_generation_strategy = breadth-first.
    Raises InvalidCandidatesQuery for unknown resource classes or traits (when reached).
    """
    return _consistently(lambda: _answer(
        query, (whole_trees, all_classes, with_traits), randomize, max_candidates,
        breadth_first))


def summarise(answer, candidates=None):
    """The Result of `candidates` (default: the whole answer) out of `answer`, with
    the summaries of their providers, as if the answer were cut to them (§4.7)."""
    return _consistently(lambda: _summarise(answer, candidates))


def _summarise(answer, candidates=None):
    if answer is None:
        return Result()
    found = answer.candidates if candidates is None else candidates
    if not found:
        return Result()
    return Result(candidates=found, **with_summaries(
        found, answer.generated, answer.roots, answer.batches, answer.query,
        answer.names, *answer.summary))


def _consistently(work):
    """work() against one view of the topology: this process's settled snapshot when it
    proves current, else the database (its token read first)."""
    with topology.optimistic_use() as use:
        if use is not None:
            # the settled snapshot, its token read along with the first usage
            try:
                result = work()
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
        return work()


def _answer(query, summary, randomize, max_candidates, breadth_first):
    names = resolve(query)
    evaluation, excluded = evaluate(query, names)
    if excluded is not None:
        return None

    limit = query.limit
    drop_same_tree = drops_same_tree(query)
    cap = max_candidates if max_candidates is not None and max_candidates >= 0 else None
    # Below 1.29 with trees in the database, the summaries of a limited answer also show
    # providers of the candidates left out (§4.7), so every candidate is generated.
    if not randomize and limit is not None and not drop_same_tree:
        cap = limit if cap is None else min(cap, limit)
    whole_trees, all_classes, with_traits = summary
    found, roots, batches = generate(evaluation, cap, drop_same_tree, breadth_first,
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
    return Answer(found, roots, evaluation.sharing, batches, generated, query, names, summary)
