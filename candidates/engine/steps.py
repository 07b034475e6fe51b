"""The steps of §3.6: one evaluation in Placement's order serves every request.

A step is a named function step(evaluation, group) (group: a request.RequestGroup; None
for the request-wide steps) that raises the 400 of an unknown name, or returns a short
reason when it proves there can be no candidate, or returns None. `costly` steps query
the whole database: their only use on a request is to decide whether an unknown name
further on is reported (Quirk Q4), so they run when the request names something unknown
(or when asked, thorough=True); otherwise generation finds the same emptiness batch by
batch. Each step is callable on its own (tests, the explainer).
"""
from collections import namedtuple
from functools import cached_property

from candidates import candidate_set
from candidates.exceptions import InvalidCandidatesQuery
from candidates.engine.facts import add_rows, load_facts
from candidates.sql import Scope, aggregates as agg_sql, capacity
from candidates.sql import traits as trait_sql
from candidates.sql import trees

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

    @cached_property
    def root_member_of(self):
        """root_member_of (extension): positive clauses as sets of aggregate ids (unknown
        aggregates left out: a clause of unknown ones is empty, no root is in it)."""
        return _clauses(self.query.root_member_of.any_of, self.names)

    @cached_property
    def root_forbidden_aggregates(self):
        known = self.names.aggregates
        return frozenset(known[a] for a in self.query.root_member_of.forbidden if a in known)

    def root_aggregate_ids(self):
        """Every aggregate id the root filter asks about."""
        return frozenset().union(self.root_forbidden_aggregates, *self.root_member_of)

    def root_filter(self, facts):
        """root_required and root_member_of as a predicate on the anchors `facts` know
        the traits and aggregates of."""
        return candidate_set.root_filter(self.root_required, self.root_forbidden, facts,
                                         self.root_member_of, self.root_forbidden_aggregates)

    @cached_property
    def whole_root_filter(self):
        """root_required and root_member_of as a predicate on every root of the database."""
        everything = Scope.everything()
        facts = candidate_set.Facts(holds_root=everything.holds_root)
        trait_ids = self.root_required | self.root_forbidden
        if trait_ids:
            add_rows(facts.traits, trait_sql.provider_traits(trait_ids, everything))
        aggregate_ids = self.root_aggregate_ids()
        if aggregate_ids:
            add_rows(facts.aggregates, agg_sql.provider_aggregates(aggregate_ids, everything))
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
    return _clauses(group.aggregates.any_of, names)


def _clauses(any_of, names):
    """Clauses of aggregate uuids as sets of aggregate ids (unknown aggregates left out)."""
    return tuple(frozenset(names.aggregates[a] for a in clause if a in names.aggregates)
                 for clause in any_of)


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
    """§3.6 step 1: some root provider satisfies root_required (and root_member_of, the
    extension: the same root filter)."""
    query = evaluation.query
    asked = [name for name, given in (
        ("root_required", query.root_required or query.root_forbidden),
        ("root_member_of", query.root_member_of.any_of or query.root_member_of.forbidden))
        if given]
    if not asked:
        return None
    root_ok = evaluation.whole_root_filter
    if not any(root_ok(root) for root in trees.root_ids()):
        return f"no root provider satisfies {' and '.join(asked)}"
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
        add_rows(members, agg_sql.provider_aggregates(ids, Scope.everything()))
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
    Step("a root provider satisfies root_required (and root_member_of)", some_root_passes,
         costly=True),
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
    (generation follows), else the first step's reason. Raises InvalidCandidatesQuery for
    the first unknown name reached. thorough: run the costly steps too (None: only when the
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
