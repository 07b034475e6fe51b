"""search.py: the pruned search gives the plain product's answer, in its order.

The reference is the plain walk itself, kept here in a few lines: every combination of
itertools.product judged by combine.judge_for. Random shapes (trees, sharing providers,
capacities, max_unit, used, traits, policies, same_subtree, suffix sets, below 1.29)
are generated from seeds, so a failure names the seed that reproduces it."""
import random
from itertools import islice, permutations, product

import pytest

from candidates import combine, search
from candidates.candidate_set import Facts, Group, Partial, group_partials
from tests.candidates.helpers import Counted

SEEDS = range(600)


def plain_product(groups, partials, facts, isolate, same_subtree, drop_same_tree):
    """{anchor: [candidate]} and [(anchor, combination, problem)] of the plain walk."""
    judge = combine.judge_for(groups, facts, isolate, same_subtree, drop_same_tree)
    anchors = sorted(set(partials[0]).intersection(*partials[1:]))
    kept, refused = {}, []
    for anchor in anchors:
        kept[anchor] = []
        for combo in product(*[per_anchor[anchor] for per_anchor in partials]):
            allocations, problem = judge(combo)
            if problem is None:
                kept[anchor].append((allocations, tuple(
                    (group.suffix, partial.providers) for group, partial in zip(groups, combo))))
            else:
                refused.append((anchor, combo, problem))
    return kept, refused


def refusals_of(refused, kept, examples):
    """{anchor: {kind: [count, problems]}} of the plain walk's refusals, for the anchors
    it kept nothing of: per kind, in the order first met, how many and the first
    `examples` problems."""
    found = {}
    for anchor, _, problem in refused:
        if kept[anchor]:
            continue
        entry = found.setdefault(anchor, {}).setdefault(problem[0], [0, []])
        entry[0] += 1
        if len(entry[1]) < examples:
            entry[1].append(problem)
    return found


def _in_order(refusals):
    """The kinds' order is the explanation's: compare it too."""
    return {anchor: list(per_kind.items()) for anchor, per_kind in refusals.items()}


def random_shape(rng):
    """(groups, partials, facts, isolate, same_subtree, drop_same_tree), partials made by
    candidate_set.group_partials from random facts."""
    facts = Facts(holds_root=lambda root: True)
    next_id, tree_id = 1, 0
    for _ in range(rng.randint(1, 3)):
        tree_id += 1
        size = rng.randint(1, 7)
        ids = list(range(next_id, next_id + size))
        next_id += size
        parents = {ids[0]: None}
        for i in range(1, size):
            parents[ids[i]] = rng.choice(ids[:i])
        _number(facts, tree_id, ids[0], parents, 1)
        for rp in ids:
            facts.root[rp] = ids[0]
    if rng.random() < 0.3:   # a sharing provider, a tree of its own
        tree_id += 1
        sharer = next_id
        facts.root[sharer] = sharer
        facts.position[sharer] = (tree_id, 1, 2)
        facts.sharing = {sharer}
        facts.sharing_anchors = {sharer: {r for r in facts.root.values() if r != sharer}}
    classes, traits = (100, 200), (7, 8)
    for rp in facts.root:
        for rc in classes:
            if rng.random() < 0.6:
                total = rng.randint(1, 4)
                facts.inventory[(rp, rc)] = (rng.randint(0, 1), total, 0, 1.0,
                                             rng.randint(1, total))
        facts.traits[rp] = {t for t in traits if rng.random() < 0.5}
    suffixes = rng.sample(["", "A", "B", "C", "D", "E"], rng.randint(2, 5))
    groups = []
    for suffix in suffixes:
        amounts = tuple((rc, rng.randint(1, 2)) for rc in classes if rng.random() < 0.6)
        required = (frozenset([rng.choice(traits)]),) if rng.random() < 0.3 else ()
        if not amounts and (not suffix or not required):
            amounts = ((rng.choice(classes), 1),)
        groups.append(Group(suffix, amounts=amounts, required=required))
    for group in groups:
        for rc, n in group.amounts:
            facts.fits[(rc, n)] = sorted(
                rp for rp in facts.root if (rp, rc) in facts.inventory
                and _fits(n, facts.inventory[(rp, rc)]))
    partials = [group_partials(group, facts, lambda root: True) for group in groups]
    named = [g.suffix for g in groups if g.suffixed]
    isolate = tuple(named) if rng.random() < 0.4 else ()
    if not isolate and len(named) > 1 and rng.random() < 0.3:
        isolate = tuple(rng.sample(named, 2))   # the isolate extension: some groups
    same_subtree = ()
    if len(named) > 1 and rng.random() < 0.5:
        same_subtree = (tuple(rng.sample(named, rng.randint(2, len(named)))),)
    return groups, partials, facts, isolate, same_subtree, rng.random() < 0.2


def _number(facts, tree_id, rp, parents, lft):
    right = lft + 1
    for child in sorted(c for c, p in parents.items() if p == rp):
        right = _number(facts, tree_id, child, parents, right) + 1
    facts.position[rp] = (tree_id, lft, right)
    return right


def _fits(n, row):
    used, total, reserved, ratio, max_unit = row
    return n <= max_unit and used + n <= (total - reserved) * ratio


@pytest.fixture(params=["searched", "small products judged whole"])
def small_products(request, monkeypatch):
    """Every anchor searched, or as the service runs: small products judged whole."""
    if request.param == "searched":
        monkeypatch.setattr(combine, "JUDGED_WHOLE_UP_TO", 0)


@pytest.mark.parametrize("chunk", range(6))
def test_the_search_gives_the_plain_products_answer_in_its_order(chunk, small_products):
    compared = 0
    for seed in SEEDS[chunk::6]:
        rng = random.Random(seed)
        groups, partials, facts, isolate, same_subtree, drop = random_shape(rng)
        if not all(partials):
            continue
        expected, refused = plain_product(groups, partials, facts, isolate, same_subtree,
                                          drop)
        streams = combine.anchor_streams(groups, partials, facts, isolate, same_subtree, drop)
        found = {anchor: list(stream) for anchor, stream in streams}
        assert found == expected, f"seed {seed}"
        # the whole answer, depth-first and breadth-first, and cut by a limit
        whole = [c for anchor in sorted(expected) for c in expected[anchor]]
        assert list(combine.candidates(groups, partials, facts, isolate, same_subtree,
                                       drop)) == whole, f"seed {seed}"
        limit = rng.randint(1, 5)
        assert list(islice(combine.candidates(groups, partials, facts, isolate, same_subtree,
                                              drop), limit)) == whole[:limit], f"seed {seed}"
        turns = list(combine.candidates(groups, partials, facts, isolate, same_subtree, drop,
                                        breadth_first=True))
        assert turns == _round_robin([expected[a] for a in sorted(expected)]), f"seed {seed}"
        # the explainer's view: the same candidates, and for an anchor without any, what
        # the plain walk refused: per kind, how many and the first few problems; few
        # examples wanted let remembered prefixes be taken whole more often
        for examples in (1, 3, 50):
            told = {}
            streams = combine.anchor_streams(groups, partials, facts, isolate, same_subtree,
                                             drop, rejected=told.__setitem__,
                                             examples=examples)
            assert {anchor: list(stream) for anchor, stream in streams} == expected
            assert _in_order(told) == _in_order(refusals_of(refused, expected, examples)), (
                f"seed {seed}, {examples} examples")
        compared += 1
    assert compared > 40   # most random shapes have partials in every group


def _round_robin(lists):
    out, lists = [], [list(items) for items in lists]
    while any(lists):
        for items in lists:
            if items:
                out.append(items.pop(0))
    return out


def test_prefixes_remembered_under_symmetry_give_the_same_answer(monkeypatch):
    """With the memory of empty prefixes switched on from the first one, random shapes
    still give the plain product's answer."""
    monkeypatch.setattr(combine, "JUDGED_WHOLE_UP_TO", 0)
    old = search.DEAD_ENDS_BEFORE_MEMORY
    search.DEAD_ENDS_BEFORE_MEMORY = 0
    try:
        for seed in SEEDS:
            groups, partials, facts, isolate, same_subtree, drop = random_shape(
                random.Random(seed))
            if not all(partials):
                continue
            expected, _ = plain_product(groups, partials, facts, isolate, same_subtree, drop)
            found = {anchor: list(stream) for anchor, stream in combine.anchor_streams(
                groups, partials, facts, isolate, same_subtree, drop)}
            assert found == expected, f"seed {seed}"
    finally:
        search.DEAD_ENDS_BEFORE_MEMORY = old


# --- the PCI shape: one provider of capacity 1 per device, one group per device ---------

PCI = 300


def pci(devices, groups, isolate=False):
    """A host (1) with `devices` devices (2, 3, ...), and `groups` groups of one device."""
    facts = Facts(holds_root=lambda root: True)
    ids = list(range(2, devices + 2))
    facts.root = {rp: 1 for rp in [1] + ids}
    facts.position = {1: (1, 1, 2 * devices + 2)}
    facts.position.update({rp: (1, 2 * i + 2, 2 * i + 3) for i, rp in enumerate(ids)})
    facts.inventory = {(rp, PCI): (0, 1, 0, 1.0, 1) for rp in ids}
    facts.fits = {(PCI, 1): ids}
    named = [Group(f"G{i}", amounts=((PCI, 1),)) for i in range(groups)]
    partials = [group_partials(group, facts, lambda root: True) for group in named]
    isolated = tuple(g.suffix for g in named) if isolate else ()
    return named, partials, facts, isolated


@pytest.mark.parametrize("isolate", [False, True])
def test_pci_devices_are_handed_out_in_the_products_order(isolate):
    groups, partials, facts, isolated = pci(8, 8, isolate)
    found = [mappings for _, mappings in combine.candidates(groups, partials, facts, isolated)]
    # capacity 1 (or isolate): each group a device of its own, every permutation, in order
    assert found == [tuple((f"G{i}", (rp,)) for i, rp in enumerate(order))
                     for order in permutations(range(2, 10))]


def test_pci_prefixes_that_overfill_a_device_are_never_extended():
    groups, partials, facts, _ = pci(8, 8)
    pushes = []
    plan = search.Plan(groups, facts, (), (), False)
    lists = [per_anchor[1] for per_anchor in partials]
    counting = [Counted(items, pushes) for items in lists]
    allocations, at = next(search.kept(plan, counting,
                                       lambda allocations, at: (allocations, list(at))))
    assert at == list(range(8))   # group i on device i + 2
    assert allocations == tuple((rp, ((PCI, 1),)) for rp in range(2, 10))
    # the plain walk refuses about 340,000 combinations first; the search looks at the
    # partials of the first device and one more per group after it
    assert len(pushes) == sum(range(1, 9))


@pytest.mark.parametrize("devices, groups", [(8, 9), (16, 17), (40, 41)])
def test_more_groups_than_devices_is_settled_without_walking_the_arrangements(devices, groups):
    """No answer: the plain product has devices ** groups combinations (16 ** 17 is
    past any patience); remembering empty prefixes by how many devices are taken, not
    which, ends the search after a few per depth."""
    groups, partials, facts, _ = pci(devices, groups)
    assert list(combine.candidates(groups, partials, facts)) == []


def test_wide_pci_limit_reaches_its_first_candidates_at_once():
    groups, partials, facts, _ = pci(16, 16)
    first = list(islice(combine.candidates(groups, partials, facts), 1000))
    assert len(first) == 1000
    assert first[0][1] == tuple((f"G{i}", (i + 2,)) for i in range(16))


def test_interchangeable_devices_are_one_kind_and_different_ones_are_not():
    groups, partials, facts, _ = pci(4, 2)
    facts.inventory[(5, PCI)] = (0, 2, 0, 1.0, 1)   # device 5 is bigger
    plan = search.Plan(groups, facts, (), (), False)
    kinds = search.provider_kinds(plan, [per_anchor[1] for per_anchor in partials])
    assert kinds[2] == kinds[3] == kinds[4] != kinds[5]


def test_a_partial_naming_two_devices_keeps_them_apart():
    facts = Facts(holds_root=lambda root: True)
    facts.root = {1: 1, 2: 1, 3: 1}
    facts.position = {1: (1, 1, 6), 2: (1, 2, 3), 3: (1, 4, 5)}
    facts.inventory = {(2, PCI): (0, 1, 0, 1.0, 1), (3, PCI): (0, 1, 0, 1.0, 1)}
    both = Partial(((2, ((PCI, 1),)), (3, ((PCI, 1),))), (2, 3))
    groups = [Group("", amounts=((PCI, 2),))]
    plan = search.Plan(groups, facts, (), (), False)
    kinds = search.provider_kinds(plan, [[both]])
    # swapping 2 and 3 maps the partial onto itself, but the signature cannot tell: they
    # are kept apart, which is only ever less sharing, never a wrong answer
    assert kinds[2] != kinds[3]


# --- "why not?": what the plain product refuses, counted without walking it -------------

def symmetric_shape(rng):
    """A host (1) with two NUMA nodes of NUMA_CLASS, each with 2 or 3 devices of PCI_CLASS
    (capacity 1 or 2, some with trait 7): many interchangeable providers, so that
    remembered prefixes are taken whole. 3 to 6 groups of one device, maybe one of a NUMA
    node, isolate on some, same_subtree of the NUMA group and a device group."""
    facts = Facts(holds_root=lambda root: True)
    per_numa, size = rng.randint(2, 3), rng.choice([1, 1, 2])
    parents, next_id = {1: None}, 2
    for _ in range(2):
        numa = next_id
        parents[numa] = 1
        facts.inventory[(numa, NUMA)] = (0, 1, 0, 1.0, 1)
        next_id += 1
        for _ in range(per_numa):
            parents[next_id] = numa
            facts.inventory[(next_id, PCI)] = (0, size, 0, 1.0, 1)
            facts.traits[next_id] = {7} if rng.random() < 0.5 else set()
            next_id += 1
    _number(facts, 1, 1, parents, 1)
    facts.root = {rp: 1 for rp in parents}
    groups = [Group(f"G{i}", amounts=((PCI, 1),),
                    required=(frozenset([7]),) if rng.random() < 0.2 else ())
              for i in range(rng.randint(3, 6))]
    same_subtree = ()
    if rng.random() < 0.4:
        groups.append(Group("N", amounts=((NUMA, 1),)))
        same_subtree = (("N", rng.choice(groups[:-1]).suffix),)
    facts.fits = {(PCI, 1): sorted(rp for rp, rc in facts.inventory if rc == PCI),
                  (NUMA, 1): sorted(rp for rp, rc in facts.inventory if rc == NUMA)}
    partials = [group_partials(group, facts, lambda root: True) for group in groups]
    named = [group.suffix for group in groups]
    isolate = tuple(rng.sample(named, rng.randint(0, len(named))))
    return groups, partials, facts, isolate, same_subtree, False


@pytest.mark.parametrize("chunk", range(3))
def test_refusals_on_symmetric_trees_are_the_plain_products(chunk, monkeypatch):
    monkeypatch.setattr(combine, "JUDGED_WHOLE_UP_TO", 0)
    compared = 0
    for seed in range(chunk, 90, 3):
        groups, partials, facts, isolate, same_subtree, drop = symmetric_shape(
            random.Random(seed))
        if not all(partials):
            continue
        expected, refused = plain_product(groups, partials, facts, isolate, same_subtree,
                                          drop)
        if all(expected.values()):
            continue
        for examples in (1, 4, 50):
            told = {}
            for _, stream in combine.anchor_streams(groups, partials, facts, isolate,
                                                    same_subtree, drop,
                                                    rejected=told.__setitem__,
                                                    examples=examples):
                list(stream)
            assert _in_order(told) == _in_order(refusals_of(refused, expected, examples)), (
                f"seed {seed}, {examples} examples")
        compared += 1
    assert compared > 5


@pytest.mark.parametrize("isolate", [False, True])
def test_why_no_candidate_on_a_wide_device_tree_is_bounded_work(isolate):
    """9 groups for 8 devices: no candidate, and 8 ** 9 (134 M) combinations refused;
    the explainer is told so (count and first examples as the plain walk would), after
    judging only its examples and looking at a few partials per depth."""
    groups, partials, facts, isolated = pci(8, 9, isolate)
    lists = [per_anchor[1] for per_anchor in partials]
    judged, pushed = [], []
    judge = combine.judge_for(groups, facts, isolated)
    counting = [Counted(items, pushed) for items in lists]
    plan = search.Plan(groups, facts, isolated, (), False)
    found = search.refusals(plan, counting,
                            lambda combo: judged.append(combo) or judge(combo), examples=50)
    first = list(islice(product(*lists), 50))
    kind = combine.ISOLATE if isolate else combine.CONSOLIDATED
    assert found == {kind: [8 ** 9, [judge(combo)[1] for combo in first]]}
    assert len(judged) == 50 and len(pushed) <= 250


NUMA = 400
