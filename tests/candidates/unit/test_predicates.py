"""The named predicates generation and the explainer share (candidate_set, combine)."""
import itertools

from candidates import candidate_set, combine
from candidates.candidate_set import Facts, Group, Partial
from candidates.sql.capacity import fitting


def test_misfit_names_the_rule_broken_in_order():
    # (n, used, usable, min_unit, max_unit, step_size)
    assert candidate_set.misfit(4, 10, 16, 1, 8, 1) is None
    assert candidate_set.misfit(1, 0, 16, 2, 8, 1) == candidate_set.MIN_UNIT
    assert candidate_set.misfit(12, 0, 16, 1, 8, 1) == candidate_set.MAX_UNIT
    assert candidate_set.misfit(3, 0, 16, 1, 8, 2) == candidate_set.STEP_SIZE
    assert candidate_set.misfit(4, 14, 16, 1, 8, 1) == candidate_set.CAPACITY
    assert candidate_set.misfit(4, 12, 16.0, 1, 8, 1) is None   # exactly full
    assert candidate_set.consolidated_misfit(5, 12, 16, 8) == candidate_set.CAPACITY
    assert candidate_set.consolidated_misfit(9, 0, 16, 8) == candidate_set.MAX_UNIT
    assert candidate_set.consolidated_misfit(3, 0, 16, 8) is None


def test_fitting_keeps_exactly_the_rows_misfit_accepts():
    rows = [(rp, 1, used, 16, reserved, ratio, 1, 8, step)
            for rp, (used, reserved, ratio, step) in enumerate(itertools.product(
                (0, 10, 15), (0, 4), (1.0, 1.5), (1, 2)))]
    for n in (1, 2, 3, 8, 9):
        fits = set(fitting([(1, n)], rows)[(1, n)])
        for rp, _, used, total, reserved, ratio, lo, hi, step in rows:
            expected = candidate_set.misfit(n, used, (total - reserved) * ratio, lo, hi, step)
            assert (rp in fits) == (expected is None)


def facts_with_traits_and_aggregates():
    facts = Facts(holds_root=lambda root: True)
    facts.root = {rp: rp for rp in range(1, 9)}
    facts.traits = {1: {10}, 2: {10, 11}, 3: {11}, 4: {12}, 5: {10, 12}}
    facts.aggregates = {1: {20}, 2: {20, 21}, 3: {21}, 6: {22}, 7: {20, 22}}
    return facts


def test_provider_refusals_are_exactly_what_the_set_filters_subtract():
    facts = facts_with_traits_and_aggregates()
    groups = [
        Group("1", amounts=((1, 1),), required=(frozenset({10}),), forbidden=frozenset({12})),
        Group("2", amounts=((1, 1),), required=(frozenset({10, 11}), frozenset({11}))),
        Group("3", amounts=((1, 1),), member_of=(frozenset({20}), frozenset({21, 22}))),
        Group("4", amounts=((1, 1),), forbidden_aggregates=frozenset({22}),
              forbidden=frozenset({11})),
    ]
    providers = set(range(1, 9))
    for group in groups:
        filters = candidate_set.group_filters(group, facts)
        passing = candidate_set._passing(providers, group, facts, filters)
        assert passing == {rp for rp in providers
                           if not candidate_set.provider_refusals(rp, filters)}
    filters = candidate_set.group_filters(groups[2], facts)
    assert candidate_set.provider_refusals(1, filters) == [
        (candidate_set.NOT_IN_AGGREGATE, 1)]
    assert candidate_set.provider_refusals(5, filters) == [
        (candidate_set.NOT_IN_AGGREGATE, 0), (candidate_set.NOT_IN_AGGREGATE, 1)]
    filters = candidate_set.group_filters(groups[0], facts)
    assert candidate_set.provider_refusals(5, filters) == [(candidate_set.FORBIDDEN_TRAIT, None)]
    assert candidate_set.provider_refusals(3, filters) == [(candidate_set.MISSING_TRAIT, 0)]


def test_entry_refusal_an_aggregate_on_the_root_spans_its_own_tree_only():
    facts = Facts(holds_root=lambda root: True)
    facts.root = {1: 1, 2: 1, 9: 9}
    facts.aggregates = {1: {20}, 9: {21}}
    group = Group("", amounts=((1, 1),), member_of=(frozenset({20}),),
                  forbidden_aggregates=frozenset({21}))
    filters = candidate_set.group_filters(group, facts)
    assert candidate_set.entry_refusal(2, 1, 1, filters) is None          # root 1 in M
    assert candidate_set.entry_refusal(2, 1, 5, filters) == candidate_set.NOT_IN_AGGREGATE
    assert candidate_set.entry_refusal(1, 1, 9, filters) == candidate_set.FORBIDDEN_AGGREGATE


def test_judge_names_what_a_combination_breaks():
    facts = Facts(holds_root=lambda root: True)
    # root 1 -> 2 -> 3; root 1 -> 4
    facts.root = {1: 1, 2: 1, 3: 1, 4: 1}
    facts.position = {1: (1, 1, 8), 2: (1, 2, 5), 3: (1, 3, 4), 4: (1, 6, 7)}
    facts.inventory = {(3, 100): (0, 4, 0, 1.0, 4), (4, 100): (3, 4, 0, 1.0, 4)}
    groups = [Group("A", amounts=((100, 1),)), Group("B", amounts=((100, 1),))]
    at = {rp: Partial(((rp, ((100, 1),)),), (rp,)) for rp in (3, 4)}

    judge = combine.judge_for(groups, facts, isolate=("A", "B"))
    assert judge((at[3], at[3])) == (None, (combine.ISOLATE, 0, 1, 3))
    assert judge((at[3], at[4])) == (((3, ((100, 1),)), (4, ((100, 1),))), None)

    judge = combine.judge_for(groups, facts, same_subtree=(("A", "B"),))
    assert judge((at[3], at[4])) == (None, (combine.SAME_SUBTREE, 0, (3, 4)))
    # group_policy=none on one provider: the summed amount must still fit
    assert judge((at[3], at[3])) == (((3, ((100, 2),)),), None)
    judge = combine.judge_for(groups, facts)
    assert judge((at[4], at[4])) == (None, (combine.CONSOLIDATED, (4, 100), 2,
                                            candidate_set.CAPACITY))
    judge = combine.judge_for(groups, facts, drop_same_tree=True)
    assert judge((at[3], at[4])) == (None, (combine.SAME_TREE, (3, 4)))


def test_anchor_streams_report_the_refused_combinations():
    facts = Facts(holds_root=lambda root: True)
    facts.root = {1: 1, 2: 2}
    facts.position = {1: (1, 1, 2), 2: (2, 1, 2)}
    groups = [Group("1", amounts=((100, 1),)), Group("2", amounts=((100, 1),))]
    partials = [{1: [Partial(((1, ((100, 1),)),), (1,))]},
                {1: [Partial(((1, ((100, 1),)),), (1,))]}]
    facts.inventory = {(1, 100): (0, 8, 0, 1.0, 8)}
    refused = {}
    streams = combine.anchor_streams(groups, partials, facts, isolate=("1", "2"),
                                     rejected=refused.__setitem__)
    assert [(anchor, list(stream)) for anchor, stream in streams] == [(1, [])]
    # per kind: how many combinations, the first few problems
    assert refused == {1: {combine.ISOLATE: [1, [(combine.ISOLATE, 0, 1, 1)]]}}
