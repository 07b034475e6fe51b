"""Combine the groups' partial candidates into candidates (allocation-candidates.md §4.4).

Pure code. For every anchor that has partial candidates in every group, the
combinations of the groups' partials are taken lazily in the order of their Cartesian
product, and a combination is kept iff isolation holds (group_policy=isolate, or the
`isolate` extension: the listed groups on distinct providers), every
same_subtree constraint holds and the consolidated amounts still fit (judge_for). The
answer's combinations are found by search.py, which skips every prefix of the product
that cannot lead to a kept one; for an anchor without any, the explainer is told how
many combinations each kind of rule refused, with the first few problems, by the same
search (search.refusals). The caller stops consuming the
generator once it has enough candidates, so `limit` bounds the work.

A candidate is a hashable pair ``(allocations, mappings)``:
``allocations = ((rp, ((rc, amount), ...)), ...)`` sorted (as a Partial's), and
``mappings = ((suffix, (rp, ...)), ...)`` in group order. Two candidates are
the same iff the pairs are equal (mappings included, Quirk Q3).
"""
from collections import deque
from itertools import chain, product

from candidates import search
from candidates.candidate_set import (  # noqa: F401 (the tree predicates: combine's too)
    by_provider, consolidated_misfit, in_one_subtree, is_ancestor_or_self, same_subtree_ok)
from providers.rules import capacity


def candidates(groups, partials, facts, isolate=(), same_subtree=(), drop_same_tree=False,
               breadth_first=False):
    """Yield candidates anchor by anchor (ascending anchor id), or, breadth_first, one
    from each anchor in turn (allocation_candidates_generation_strategy).

    groups: the compiled groups (candidate_set.Group), in request order;
    partials: one {anchor: [Partial]} per group; facts: candidate_set.Facts;
    isolate: the suffixes of the groups whose providers must be pairwise distinct
    (group_policy=isolate: every suffixed group); same_subtree: tuples of suffixes;
    drop_same_tree: below 1.29, drop
    candidates allocating from two providers of one tree.
    """
    if len(groups) == 1 and not drop_same_tree and not breadth_first:
        # every partial is a candidate, and group_partials() lists them in anchor order
        suffix = groups[0].suffix
        return ((partial.allocations, ((suffix, partial.providers),))
                for per_anchor in partials[0].values() for partial in per_anchor)
    streams = [stream for _, stream in anchor_streams(groups, partials, facts, isolate,
                                                       same_subtree, drop_same_tree)]
    if breadth_first:
        return _round_robin(streams)
    return chain.from_iterable(streams)


def anchor_streams(groups, partials, facts, isolate=(), same_subtree=(),
                   drop_same_tree=False, rejected=None, examples=50):
    """[(anchor, iterator of its candidates)] in ascending anchor order, for every anchor
    with partial candidates in every group (arguments as for candidates()).

    rejected: None, or a callable(anchor, refusals) told, once an anchor's iterator has
    run out without a candidate, why judge() refuses its combinations:
    {kind: [count, problems]}, for each kind of problem in the order the product's walk
    first meets it, the combinations it refuses and the first `examples` problems, in
    the product's order (product_refusals; the explainer's "why not?": an anchor with
    candidates has nothing to explain).
    """
    anchors = set(partials[0])
    for per_anchor in partials[1:]:
        anchors &= per_anchor.keys()
    suffixes = [group.suffix for group in groups]

    if len(groups) == 1 and not drop_same_tree:
        # judge() has no rule to apply: every partial is a candidate
        suffix = suffixes[0]

        def of_anchor(anchor):
            for partial in partials[0][anchor]:
                yield partial.allocations, ((suffix, partial.providers),)
        return [(anchor, of_anchor(anchor)) for anchor in sorted(anchors)]

    # the search skips prefixes that cannot lead to a kept combination
    plan = search.Plan(groups, facts, isolate, same_subtree, drop_same_tree)
    judge = judge_for(groups, facts, isolate, same_subtree, drop_same_tree)
    if rejected is None:
        return [(anchor, _kept(plan, judge, [per_anchor[anchor] for per_anchor in partials],
                               suffixes))
                for anchor in sorted(anchors)]

    def explained(anchor):
        lists = [per_anchor[anchor] for per_anchor in partials]
        kept = False
        for candidate in _kept(plan, judge, lists, suffixes):
            kept = True
            yield candidate
        if not kept:
            # the explainer shows why an anchor has no candidate: every combination refused
            rejected(anchor, _refusals(plan, judge, lists, examples))
    return [(anchor, explained(anchor)) for anchor in sorted(anchors)]


# An anchor's product of at most this many combinations is judged whole: a few judge()
# calls cost less than setting the search up (nested trees: 3 combinations a tree).
JUDGED_WHOLE_UP_TO = 32


def _kept(plan, judge, lists, suffixes):
    """The candidates of one anchor: search.kept's combinations, or judge()'s on a small
    product (the same, in the same order). Each (suffix, providers) pair of the
    mappings the search gives is made once per partial and shared by the candidates
    using it (a large answer holds tens of thousands of candidates at once)."""
    if _size(lists) <= JUDGED_WHOLE_UP_TO:
        return _judged(judge, lists, suffixes)
    pairs = [[(suffix, partial.providers) for partial in partials]
             for suffix, partials in zip(suffixes, lists)]
    indexes = range(len(lists))

    def build(allocations, at):
        return allocations, tuple([pairs[i][at[i]] for i in indexes])
    return search.kept(plan, lists, build)


def _refusals(plan, judge, lists, examples):
    """search.refusals, or product_refusals on a small product (the same answer)."""
    if _size(lists) <= JUDGED_WHOLE_UP_TO:
        return product_refusals(judge, lists, examples)
    return search.refusals(plan, lists, judge, examples)


def product_refusals(judge, lists, examples):
    """{kind: [count, problems]} of judge()'s refusals (see anchor_streams), judging
    every combination of the product."""
    found = {}
    for combo in product(*lists):
        problem = judge(combo)[1]
        entry = found.setdefault(problem[0], [0, []])
        entry[0] += 1
        if len(entry[1]) < examples:
            entry[1].append(problem)
    return found


def _size(lists):
    size = 1
    for partials in lists:
        size *= len(partials)
    return size


def _judged(judge, lists, suffixes):
    for combo in product(*lists):
        allocations, problem = judge(combo)
        if problem is None:
            yield allocations, tuple(zip(suffixes, [partial.providers for partial in combo]))


def _round_robin(streams):
    """One item from each stream in turn until every stream is exhausted."""
    active = deque(streams)
    while active:
        stream = active.popleft()
        for item in stream:
            yield item
            active.append(stream)
            break


# Why judge() refuses a combination (§4.4), the first element of its problem tuple:
# (ISOLATE, i, j, rp): isolated groups i and j (indexes into groups) both picked rp;
# (SAME_SUBTREE, k, providers): the providers of same_subtree constraint k (index) are
#   not all below one of them;
# (CONSOLIDATED, (rp, rc), amount, rule): the summed amount no longer fits (rule:
#   candidate_set.CAPACITY or MAX_UNIT);
# (SAME_TREE, providers): below 1.29, two providers of one tree.
# The kinds are search.py's (search.refusals settles them without judging).
ISOLATE, SAME_SUBTREE, CONSOLIDATED, SAME_TREE = (
    search.ISOLATE, search.SAME_SUBTREE, search.CONSOLIDATED, search.SAME_TREE)


def judge_for(groups, facts, isolate=(), same_subtree=(), drop_same_tree=False):
    """The rules of §4.4 for one request as judge(combination) -> (allocations, None)
    when the combination (one Partial per group, in group order) is kept, with its
    allocations summed per (provider, class) in canonical form; else (None, problem) (see
    ISOLATE ... above). Rules are checked in the order isolate, same_subtree,
    consolidated capacity, same tree (below 1.29)."""
    root = facts.root
    if len(groups) == 1:
        # its partials are the candidates (a same_subtree over one suffix always holds)
        def judge_one(combo):
            allocations = combo[0].allocations
            if drop_same_tree and _two_from_one_tree(allocations, root):
                return None, (SAME_TREE, combo[0].providers)
            return allocations, None
        return judge_one

    suffixes = [group.suffix for group in groups]
    isolated = [i for i, suffix in enumerate(suffixes) if suffix in isolate]
    constraints = [[suffixes.index(s) for s in constraint] for constraint in same_subtree]
    check_isolate = len(isolated) > 1
    pairs = [(k, c) for k, c in enumerate(constraints) if len(c) == 2]
    larger = [(k, c) for k, c in enumerate(constraints) if len(c) != 2]
    position = facts.position
    inventory = facts.inventory

    def judge(combo):
        if check_isolate:
            picked = [combo[i].providers[0] for i in isolated]
            if len(set(picked)) != len(picked):
                return None, _isolate_problem(picked, isolated)
        for k, (i, j) in pairs:
            a, b = combo[i].providers[0], combo[j].providers[0]
            if a != b and not in_one_subtree(position, a, b):
                return None, (SAME_SUBTREE, k, (a, b))
        for k, c in larger:
            chosen = [combo[i].providers[0] for i in c]
            if not same_subtree_ok(chosen, position):
                return None, (SAME_SUBTREE, k, tuple(chosen))
        allocations = [entry for partial in combo for entry in partial.allocations]
        if len(dict(allocations)) < len(allocations):
            # one provider serves several groups: sum per class, and the sums must fit
            amounts = {}
            for rp, per_class in allocations:
                for rc, n in per_class:
                    amounts[rp, rc] = amounts.get((rp, rc), 0) + n
            problem = _consolidated_problem(amounts, inventory)
            if problem is not None:
                return None, problem
            allocations = by_provider((rp, rc, n) for (rp, rc), n in amounts.items())
        else:
            allocations = tuple(sorted(allocations))
        if drop_same_tree and _two_from_one_tree(allocations, root):
            return None, (SAME_TREE, tuple(rp for rp, _ in allocations))
        return allocations, None
    return judge


def _isolate_problem(picked, isolated):
    """(ISOLATE, i, j, rp) for the first two isolated groups that picked one provider."""
    first = {}
    for index, rp in zip(isolated, picked):
        if rp in first:
            return ISOLATE, first[rp], index, rp
        first[rp] = index
    raise AssertionError("no shared provider")


def _consolidated_problem(amounts, inventory):
    """The first (CONSOLIDATED, (rp, rc), sum, rule) among summed amounts per (provider,
    class) that no longer fit (candidate_set.consolidated_misfit), else None.

    The spec writes int(capacity) (allocation-candidates.md §4.4); for the integer
    used + sum, `<= int(x)` and `<= x` agree for every x >= 0, and for x < 0 both fail
    (amounts are >= 1), so the untruncated capacity gives the same answer.
    """
    for key, amount in amounts.items():
        used, total, reserved, ratio, max_unit = inventory[key]
        rule = consolidated_misfit(amount, used, capacity(total, reserved, ratio), max_unit)
        if rule is not None:
            return CONSOLIDATED, key, amount, rule
    return None


def _two_from_one_tree(allocations, root):
    """Do the allocations (one entry per provider) use two providers of one tree?"""
    return len({root[rp] for rp, _ in allocations}) != len(allocations)
