"""candidate_set.py and combine.py: pure set algebra on hand-made facts."""
from candidates import candidate_set, combine
from candidates.candidate_set import Facts, Group, Partial, group_partials


def tree_facts():
    # root 1 with children 2, 3 (2 has child 4); root 10 alone; sharing 20 (own root 20)
    facts = Facts(holds_root=lambda root: True)
    facts.root = {1: 1, 2: 1, 3: 1, 4: 1, 10: 10, 20: 20}
    facts.position = {1: (1, 1, 8), 2: (1, 2, 5), 4: (1, 3, 4), 3: (1, 6, 7),
                      10: (2, 1, 2), 20: (3, 1, 2)}
    return facts


def test_unsuffixed_spreads_over_tree_and_sharing():
    facts = tree_facts()
    facts.fits = {(100, 1): [2, 3], (200, 5): [1, 20]}
    facts.sharing = {20}
    facts.sharing_anchors = {20: {1}}
    group = Group("", amounts=((100, 1), (200, 5)))
    partials = group_partials(group, facts, lambda root: True)
    assert list(partials) == [1, 20] or list(partials) == [1]
    assert [p.providers for p in partials[1]] == [(1, 2), (2, 20), (1, 3), (3, 20)]
    assert partials[1][0].allocations == ((1, ((200, 5),)), (2, ((100, 1),)))


def test_required_traits_collective_and_forbidden_per_provider():
    facts = tree_facts()
    facts.fits = {(100, 1): [2, 3], (200, 1): [1]}
    facts.traits = {1: {7}, 3: {8}}
    group = Group("", amounts=((100, 1), (200, 1)), required=(frozenset({7}),),
                  forbidden=frozenset({8}))
    partials = group_partials(group, facts, lambda root: True)
    assert [p.providers for p in partials[1]] == [(1, 2)]


def test_suffixed_group_single_provider_and_member_of():
    facts = tree_facts()
    facts.fits = {(100, 1): [2, 3, 10], (200, 1): [2, 10]}
    facts.aggregates = {10: {5}}
    group = Group("1", amounts=((100, 1), (200, 1)), member_of=(frozenset({5}),))
    assert group_partials(group, facts, lambda root: True) == {
        10: [Partial(((10, ((100, 1), (200, 1))),), (10,))]}


def test_resourceless_without_positive_filter_matches_nothing():
    facts = tree_facts()
    facts.traits = {2: {7}}
    group = Group("_X", forbidden=frozenset({7}))
    assert group_partials(group, facts, lambda root: True) == {}


def test_same_subtree_uses_mptt_positions():
    facts = tree_facts()
    assert combine.same_subtree_ok([2, 4], facts.position)
    assert combine.same_subtree_ok([1, 3, 4], facts.position)
    assert not combine.same_subtree_ok([3, 4], facts.position)
    assert combine.same_subtree_ok([3, 3], facts.position)


def test_isolate_and_consolidation():
    facts = tree_facts()
    facts.inventory = {(2, 100): (0, 2, 0, 1.0, 2), (3, 100): (0, 2, 0, 1.0, 2)}
    groups = [Group("1", amounts=((100, 1),)), Group("2", amounts=((100, 1),))]
    p2, p3 = Partial(((2, ((100, 1),)),), (2,)), Partial(((3, ((100, 1),)),), (3,))
    partials = [{1: [p2, p3]}, {1: [p2, p3]}]
    isolated = list(combine.candidates(groups, partials, facts, isolate=("1", "2")))
    assert len(isolated) == 2
    together = list(combine.candidates(groups, partials, facts, isolate=()))
    assert len(together) == 4
    assert ((2, ((100, 2),)),) in [c[0] for c in together]
    facts.inventory[(2, 100)] = (1, 2, 0, 1.0, 2)   # 1 used: 1 + 2 > 2
    assert ((2, ((100, 2),)),) not in [c[0] for c in combine.candidates(groups, partials, facts)]


def test_drop_same_tree_below_1_29():
    facts = tree_facts()
    facts.inventory = {}
    groups = [Group("", amounts=((100, 1), (200, 1)))]
    partials = [{1: [Partial(((2, ((100, 1),)), (3, ((200, 1),))), (2, 3)),
                     Partial(((2, ((100, 1),)), (20, ((200, 1),))), (2, 20))]}]
    kept = list(combine.candidates(groups, partials, facts, drop_same_tree=True))
    assert [c[1] for c in kept] == [(("", (2, 20)),)]


def test_combination_is_lazy():
    facts = tree_facts()
    groups = [Group("1", amounts=((100, 1),))]
    partials = [{1: [Partial(((2, ((100, 1),)),), (2,))] * 1000}]
    generator = combine.candidates(groups, partials, facts)
    assert next(generator)[0] == ((2, ((100, 1),)),)


def test_trait_and_aggregate_filters():
    assert candidate_set.meets_every([frozenset({1, 2}), frozenset({3})], {2, 3})
    assert not candidate_set.meets_every([frozenset({1, 2}), frozenset({3})], {1, 2})
    assert candidate_set.has_traits({1, 3}, [frozenset({1})], frozenset({2}))
    assert not candidate_set.has_traits({1, 2}, [frozenset({1})], frozenset({2}))
    assert candidate_set.holding_any({1: {7}, 2: {8}, 3: {7, 9}}, frozenset({7})) == {1, 3}


def test_root_filter_checks_the_anchor_only():
    facts = tree_facts()
    facts.traits = {1: {7}, 2: {8}}
    root_ok = candidate_set.root_filter(frozenset({7}), frozenset({8}), facts)
    assert root_ok(1) and not root_ok(10)
    assert not candidate_set.root_filter(frozenset({8}), frozenset(), facts)(1)
