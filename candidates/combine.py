"""Combine the groups' partial candidates into candidates (allocation-candidates.md §4.4).

Pure code. For every anchor that has partial candidates in every group, the
Cartesian product of the groups' partials is walked lazily in a fixed
order, and a combination is kept iff group_policy=isolate holds, every
same_subtree constraint holds and the consolidated amounts still fit. The
caller stops consuming the generator once it has enough candidates, so
`limit` bounds the work.

A candidate is a hashable pair ``(allocations, mappings)``:
``allocations = (((rp, rc), amount), ...)`` sorted, and
``mappings = ((suffix, (rp, ...)), ...)`` in group order. Two candidates are
the same iff the pairs are equal (mappings included, Quirk Q3).
"""
from collections import deque
from itertools import chain, product

from providers.rules import capacity


def is_ancestor_or_self(position, upper, lower):
    """MPTT: `upper` is `lower` or one of its ancestors."""
    tree_u, lft_u, rght_u = position[upper]
    tree_l, lft_l, rght_l = position[lower]
    return tree_u == tree_l and lft_u <= lft_l and rght_l <= rght_u


def same_subtree_ok(providers, position):
    """|X| = 1, or some provider of X is an ancestor-or-self of all of X."""
    if len(providers) == 2:
        a, b = providers
        return (a == b or is_ancestor_or_self(position, a, b)
                or is_ancestor_or_self(position, b, a))
    distinct = set(providers)
    if len(distinct) <= 1:
        return True
    return any(all(is_ancestor_or_self(position, top, other) for other in distinct)
               for top in distinct)


def candidates(groups, partials, facts, isolate=False, same_subtree=(), drop_same_tree=False,
               breadth_first=False):
    """Yield candidates anchor by anchor (ascending anchor id), or, breadth_first, one
    from each anchor in turn (allocation_candidates_generation_strategy).

    groups: the compiled groups (candidate_set.Group), in request order;
    partials: one {anchor: [Partial]} per group; facts: candidate_set.Facts;
    same_subtree: tuples of suffixes; drop_same_tree: below 1.29, drop
    candidates allocating from two providers of one tree.
    """
    anchors = set(partials[0])
    for per_anchor in partials[1:]:
        anchors &= per_anchor.keys()
    if len(groups) == 1:
        of_anchor = _single_group(groups[0], partials[0], facts, drop_same_tree)
    else:
        of_anchor = _combined(groups, partials, facts, isolate, same_subtree, drop_same_tree)
    streams = (of_anchor(anchor) for anchor in sorted(anchors))
    if breadth_first:
        return _round_robin(list(streams))
    return chain.from_iterable(streams)


def _round_robin(streams):
    """One item from each stream in turn until every stream is exhausted."""
    active = deque(streams)
    while active:
        stream = active.popleft()
        for item in stream:
            yield item
            active.append(stream)
            break


def _single_group(group, partials, facts, drop_same_tree):
    """anchor -> its candidates when there is one group: its partials are the candidates
    (a same_subtree over one suffix always holds)."""
    suffix = group.suffix

    def of_anchor(anchor):
        for partial in partials[anchor]:
            if drop_same_tree and _two_from_one_tree(dict(partial.allocations), facts.root):
                continue
            yield partial.allocations, ((suffix, partial.providers),)
    return of_anchor


def _combined(groups, partials, facts, isolate, same_subtree, drop_same_tree):
    """anchor -> its candidates: the product of the groups' partials under the anchor,
    kept when isolate, same_subtree and the consolidated capacity hold (§4.4)."""
    suffixes = [group.suffix for group in groups]
    suffixed = [i for i, group in enumerate(groups) if group.suffixed]
    constraints = [[suffixes.index(s) for s in constraint] for constraint in same_subtree]
    check_isolate = isolate and len(suffixed) > 1
    pairs = [c for c in constraints if len(c) == 2]
    larger = [c for c in constraints if len(c) != 2]
    position = facts.position
    inventory = facts.inventory

    def of_anchor(anchor):
        lists = [per_anchor[anchor] for per_anchor in partials]
        for combo in product(*lists):
            if check_isolate:
                picked = [combo[i].providers[0] for i in suffixed]
                if len(set(picked)) != len(picked):
                    continue
            if pairs or larger:
                ok = True
                for i, j in pairs:
                    a, b = combo[i].providers[0], combo[j].providers[0]
                    if a != b:
                        tree_a, lft_a, rght_a = position[a]
                        tree_b, lft_b, rght_b = position[b]
                        if tree_a != tree_b or not (
                                (lft_a <= lft_b and rght_b <= rght_a)
                                or (lft_b <= lft_a and rght_a <= rght_b)):
                            ok = False
                            break
                if not ok or (larger and not all(
                        same_subtree_ok([combo[i].providers[0] for i in c], position)
                        for c in larger)):
                    continue
            allocations = [item for partial in combo for item in partial.allocations]
            amounts = dict(allocations)
            if len(amounts) < len(allocations):
                # one provider serves a class for several groups: the sums must fit
                amounts = {}
                for key, n in allocations:
                    amounts[key] = amounts.get(key, 0) + n
                if not _consolidated_fits(amounts, inventory):
                    continue
                allocations = list(amounts.items())
            if drop_same_tree and _two_from_one_tree(amounts, facts.root):
                continue
            allocations.sort()
            yield (tuple(allocations),
                   tuple(zip(suffixes, [partial.providers for partial in combo])))
    return of_anchor


def _consolidated_fits(amounts, inventory):
    """Summed amounts per (provider, class): used + sum <= capacity and sum <= max_unit.

    The spec writes int(capacity) (allocation-candidates.md §4.4); for the integer
    used + sum, `<= int(x)` and `<= x` agree for every x >= 0, and for x < 0 both fail
    (amounts are >= 1), so the untruncated capacity gives the same answer.
    """
    for key, amount in amounts.items():
        used, total, reserved, ratio, max_unit = inventory[key]
        if used + amount > capacity(total, reserved, ratio) or amount > max_unit:
            return False
    return True


def _two_from_one_tree(amounts, root):
    providers = {rp for rp, _ in amounts}
    return len({root[rp] for rp in providers}) != len(providers)
