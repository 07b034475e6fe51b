"""The combinations one anchor keeps (§4.4), found by a search whose work follows the answer.

Pure code, used by combine.anchor_streams. The Cartesian product of the groups' partial
candidates is walked depth first, group by group in request order and each group's
partials in their order, so the kept combinations come out in exactly the product's
order. A prefix (one partial for each of the first groups) is dropped as soon as no
combination extending it can be kept:

* two isolated groups on one provider;
* a same_subtree constraint all of whose groups are chosen, and which fails, or which
  can no longer hold: none of the providers chosen for it so far, nor any its other
  groups may take, is above all of those chosen;
* one provider serving two groups while some summed amount no longer fits (sums only
  grow, and a misfit amount only gets worse: candidate_set.consolidated_misfit);
* below 1.29 (drop_same_tree), two providers of one tree in the allocations.

A complete combination that passes these checks is exactly one judge_for() keeps; its
allocations are built as judge_for() builds them (_State.allocations).

Symmetry: when whole subtrees of the search come up empty (the request cannot be met
once some devices are taken), each empty prefix is remembered by what matters for the
groups still to place, with interchangeable providers (the same partials up to their
own id, inventory, root and place in the tree: devices of one class, size, traits and
parent) counted as one: the search then learns once per class and count that, say, a
ninth device cannot be found, instead of once per arrangement of eight. Every distinct
mappings is still returned (Quirk Q3): only prefixes that lead to nothing are skipped.

refusals() answers the explainer for an anchor that keeps nothing: how many combinations
each kind of rule refuses, and the first few problems, as judging the whole product
would, by the same walk and checks; it counts a prefix's combinations at once when a
rule settles them all, and remembers counts under the same symmetry.
"""
from itertools import chain, islice, product

from candidates.candidate_set import (by_provider, consolidated_misfit, is_ancestor_or_self,
                                     same_subtree_ok)
from providers.rules import capacity

# The kinds of combine.judge_for's problems (combine.py says what each one holds).
ISOLATE, SAME_SUBTREE, CONSOLIDATED, SAME_TREE = (
    "isolate", "same_subtree", "consolidated", "same_tree")

# Empty subtrees the search meets before it starts remembering them: a request that has
# candidates rarely meets any past the checks above, and pays nothing for the memory.
DEAD_ENDS_BEFORE_MEMORY = 32


class Plan:
    """What the search checks for one request: groups (candidate_set.Group) in request
    order, facts (candidate_set.Facts), isolate / same_subtree / drop_same_tree as
    combine.candidates takes them."""

    def __init__(self, groups, facts, isolate, same_subtree, drop_same_tree):
        suffixes = [group.suffix for group in groups]
        self.size = len(groups)
        self.isolated = [suffix in isolate for suffix in suffixes]
        # each same_subtree constraint is judged once its last group is chosen
        self.completed_at = [[] for _ in groups]
        self.pending = [[] for _ in groups]   # (constraint, member) chosen, not yet judged
        self.started_at = [[] for _ in groups]   # (members so far, members after)
        for k, constraint in enumerate(same_subtree):
            members = [suffixes.index(s) for s in constraint]
            last = max(members)
            self.completed_at[last].append(members)
            for i in members:
                if i != last:
                    self.started_at[i].append(([m for m in members if m <= i],
                                               [m for m in members if m > i]))
            for depth in range(self.size):
                self.pending[depth] += [(k, i) for i in members if i < depth <= last]
        self.facts = facts
        self.drop_same_tree = drop_same_tree
        self.first_misfit = {}   # (rp, rc) -> the smallest sum found not to fit
        self.last_fit = {}       # (rp, rc) -> the largest sum found to fit

    def misfits(self, key, amount):
        """candidate_set.consolidated_misfit of `amount` summed on (rp, rc) `key`. Asked
        of each provider once or twice: a misfit only grows with the amount, so the
        smallest amount found too much (first_misfit) and the largest found to fit
        answer the rest."""
        if amount >= self.first_misfit.get(key, amount + 1):
            return True
        if amount <= self.last_fit.get(key, 0):
            return False
        used, total, reserved, ratio, max_unit = self.facts.inventory[key]
        if consolidated_misfit(amount, used, capacity(total, reserved, ratio),
                               max_unit) is None:
            self.last_fit[key] = amount
            return False
        self.first_misfit[key] = amount
        return True


class _State:
    """The checks' running totals for the prefix chosen so far; push() and pop() keep
    them, and push() says whether the prefix may still lead to a kept combination."""

    def __init__(self, plan, chosen, lists):
        self.plan = plan
        self.chosen = chosen
        # per depth: (members chosen, providers the members still to choose may take) of
        # each same_subtree constraint under way (same_subtree_may_hold)
        self.under_way = [[(so_far, frozenset(p.providers[0] for i in after for p in lists[i]))
                           for so_far, after in started] for started in plan.started_at]
        self.sums = {}        # (rp, rc) -> summed amount
        self.bad = set()      # (rp, rc) whose sum no longer fits, while repeats
        self.serving = {}     # rp -> partials allocating from it
        self.repeats = 0      # partials allocating from a provider already serving one
        self.taken = {}       # rp -> isolated groups on it
        self.clashes = 0      # isolated groups on a provider already taken
        self.tree_members = {}   # root -> its providers in the allocations
        self.crowded = 0      # trees with two providers in the allocations

    def refuses(self, depth, partial):
        """A refusal found without changing the totals (most refusals of a wide device
        request: a device already taken): an isolated group on a taken provider, or an
        amount that no longer fits a provider already serving a group."""
        plan = self.plan
        allocations, providers = partial
        if plan.isolated[depth] and providers[0] in self.taken:
            return True
        serving, sums, first_misfit = self.serving, self.sums, plan.first_misfit
        for rp, per_class in allocations:
            if rp in serving:
                for rc, n in per_class:
                    key = (rp, rc)
                    total = sums.get(key, 0) + n
                    # a device already full: known without a call
                    if total >= first_misfit.get(key, total + 1) or plan.misfits(key, total):
                        return True
        return False

    def push(self, depth, partial):
        """Add the partial of group `depth`, which refuses() did not refuse; False if no
        kept combination extends the prefix now (pop() it all the same)."""
        plan, sums, serving, bad = self.plan, self.sums, self.serving, self.bad
        repeated = self.repeats
        for rp, per_class in partial.allocations:
            count = serving.get(rp, 0)
            serving[rp] = count + 1
            if count:
                self.repeats += 1
            elif plan.drop_same_tree:
                self._join_tree(rp)
            for rc, n in per_class:
                key = (rp, rc)
                total = sums.get(key, 0) + n
                sums[key] = total
                # the sums count once a provider serves two groups: bad is kept from then
                # (refuses() has seen to the providers already serving one)
                if repeated and not count and plan.misfits(key, total):
                    bad.add(key)
        if self.repeats and not repeated:
            for key, total in sums.items():
                if plan.misfits(key, total):
                    bad.add(key)
        if plan.isolated[depth]:
            rp = partial.providers[0]
            count = self.taken.get(rp, 0)
            self.taken[rp] = count + 1
            if count:
                self.clashes += 1
        if self.clashes or self.crowded or bad:
            return False
        return self.subtree_may_hold(depth)

    def subtree_may_hold(self, depth):
        """With group `depth` just chosen: does every same_subtree constraint it completes
        hold, and may every one under way still hold?"""
        chosen = self.chosen
        position = self.plan.facts.position
        for members in self.plan.completed_at[depth]:
            if not same_subtree_ok([chosen[i].providers[0] for i in members], position):
                return False
        for members, ahead in self.under_way[depth]:
            if not same_subtree_may_hold([chosen[i].providers[0] for i in members], ahead,
                                         position):
                return False
        return True

    def misfits(self):
        """Does some summed amount no longer fit? (Only a provider serving two groups
        can overfill: each partial fits on its own.)"""
        misfits = self.plan.misfits
        return self.repeats > 0 and any(misfits(key, total)
                                        for key, total in self.sums.items())

    def pop(self, depth, partial):
        plan, sums, serving, bad = self.plan, self.sums, self.serving, self.bad
        if plan.isolated[depth]:
            rp = partial.providers[0]
            count = self.taken[rp] - 1
            if count:
                self.taken[rp] = count
                self.clashes -= 1
            else:
                del self.taken[rp]
        for rp, per_class in partial.allocations:
            for rc, n in per_class:
                key = (rp, rc)
                total = sums[key] - n
                if total:
                    sums[key] = total
                    if key in bad and not plan.misfits(key, total):
                        bad.discard(key)
                else:   # amounts are >= 1: no partial left allocates it
                    del sums[key]
                    bad.discard(key)
            count = serving[rp] - 1
            if count:
                serving[rp] = count
                self.repeats -= 1
            else:
                del serving[rp]
                if plan.drop_same_tree:
                    self._leave_tree(rp)
        if not self.repeats:
            bad.clear()

    def allocations(self):
        """The allocations of the complete combination in canonical form, as judge_for()
        gives them: when a provider serves several groups, the running sums are the
        amounts summed per (provider, class)."""
        if self.repeats:
            return by_provider((rp, rc, n) for (rp, rc), n in self.sums.items())
        return tuple(sorted([entry for partial in self.chosen for entry in partial.allocations]))

    def _join_tree(self, rp):
        members = self.tree_members.setdefault(self.plan.facts.root[rp], set())
        members.add(rp)
        if len(members) == 2:
            self.crowded += 1

    def _leave_tree(self, rp):
        root = self.plan.facts.root[rp]
        members = self.tree_members[root]
        if len(members) == 2:
            self.crowded -= 1
        members.discard(rp)
        if not members:
            del self.tree_members[root]

    def key(self, depth, kinds):
        """What the groups from `depth` on depend on, providers named by their kind
        (interchangeable providers share one): the checks' totals per provider, the
        same_subtree groups chosen but not yet judged, and whether a provider already
        serves two groups and some sum already misfits."""
        return depth, self.repeats > 0, bool(self.bad), self.holdings(depth, kinds)

    def holdings(self, depth, kinds):
        """key() but its flags: per provider touched, by kind, its totals and its
        same_subtree groups chosen but not yet judged."""
        sums, per_rp = self.sums, {}
        for (rp, rc), total in sums.items():
            per_rp.setdefault(rp, []).append((rc, total))
        roles = {}
        for k, i in self.plan.pending[depth]:
            roles.setdefault(self.chosen[i].providers[0], []).append((k, i))
        touched = set(per_rp) | set(self.taken) | set(roles)
        return tuple(sorted(
            (kinds[rp], tuple(sorted(per_rp.get(rp, ()))), self.serving.get(rp, 0),
             self.taken.get(rp, 0), tuple(roles.get(rp, ())))
            for rp in touched))


def same_subtree_may_hold(providers, ahead, position):
    """May a same_subtree constraint hold once its other groups are chosen, given the
    providers of those chosen so far and those the others may take (`ahead`)? It holds
    iff one of its providers is an ancestor-or-self of all, so that one must be among
    these and above every provider chosen so far (for SR-IOV: the VFs' PFs under the
    NUMA node chosen for the CPUs)."""
    for top in chain(providers, ahead):
        for rp in providers:
            if rp != top and not is_ancestor_or_self(position, top, rp):
                break
        else:
            return True
    return False


def kept(plan, lists, build):
    """Yield build(allocations, at) for every combination (one partial of each of
    `lists`, one list per group) that judge_for() keeps, in the order of
    itertools.product(*lists): its allocations as judge_for() gives them, and at[i] the
    index in lists[i] of group i's partial (a list reused between calls)."""
    size = plan.size
    chosen = [None] * size
    state = _State(plan, chosen, lists)
    refuses, push, pop = state.refuses, state.push, state.pop
    lengths = [len(partials) for partials in lists]
    at = [0] * size               # the partial tried, per depth
    yielded_at = [0] * size       # candidates yielded when the prefix was entered
    yielded = dead_ends = 0
    memory, kinds = None, None    # empty prefixes, by _State.key; provider -> kind
    depth, last = 0, size - 1
    while True:
        # the next partial of this depth that the prefix above may take
        partials, index, end = lists[depth], at[depth], lengths[depth]
        while index < end:
            partial = partials[index]
            if not refuses(depth, partial):
                chosen[depth] = partial
                if push(depth, partial) and (
                        depth == last or not memory
                        or state.key(depth + 1, kinds) not in memory):
                    break
                pop(depth, partial)
            index += 1
        at[depth] = index
        if index < end:
            if depth == last:
                yield build(state.allocations(), at)
                yielded += 1
                pop(depth, partial)
                at[depth] += 1
            else:
                depth += 1
                at[depth] = 0
                yielded_at[depth] = yielded
            continue
        # every partial tried at this depth: back to the prefix above
        if depth == 0:
            return
        if yielded == yielded_at[depth]:
            dead_ends += 1
            if memory is None and dead_ends > DEAD_ENDS_BEFORE_MEMORY:
                memory, kinds = set(), provider_kinds(plan, lists)
            if memory is not None:
                memory.add(state.key(depth, kinds))
        depth -= 1
        pop(depth, chosen[depth])
        at[depth] += 1



def refusals(plan, lists, judge, examples):
    """For an anchor none of whose combinations judge() keeps: {kind: [count, problems]},
    for each kind of judge()'s problems (ISOLATE ... above) in the order the product
    first meets it, how many combinations it refuses and the first `examples` (>= 1) of
    its problems, in the product's order. That is what judging every combination of
    itertools.product(*lists) tells (combine.product_refusals), found with work that
    follows it rather than the product's size (the explainer's "why not?").

    The product is walked depth first, in its order. A prefix settles the kind of every
    combination extending it once judge()'s earlier rules can no longer refuse one: an
    isolate clash (the first rule); a same_subtree that cannot hold, once no isolated
    group is left to choose; a summed amount that no longer fits, once neither isolated
    nor same_subtree groups are left. Its combinations are counted at once, and judged
    one by one only while their kind still wants examples. The counts per kind of a
    prefix walked are remembered by what its extensions depend on (_State.holdings:
    interchangeable providers counted as one, and whether a same_subtree has failed); a
    prefix found equal to one remembered takes its counts, unless a kind counted there
    still wants examples (then it is walked: that happens for at most `examples`
    combinations per kind).
    """
    size = plan.size
    chosen = [None] * size
    state = _State(plan, chosen, lists)
    kinds = provider_kinds(plan, lists)
    extending = [1] * (size + 1)   # combinations extending a prefix of each length
    for depth in range(size - 1, -1, -1):
        extending[depth] = extending[depth + 1] * len(lists[depth])
    # the prefix lengths past which no isolated / same_subtree group is left to choose
    isolate_settled = max((i + 1 for i in range(size) if plan.isolated[i]), default=0)
    subtree_settled = max((i + 1 for i, done in enumerate(plan.completed_at) if done),
                          default=0)
    tally, memory = {}, {}

    def settled_kind(depth, failed):
        """The kind of every combination extending chosen[:depth], if settled."""
        if state.clashes:
            return ISOLATE
        if depth < isolate_settled:
            return None
        if failed:
            return SAME_SUBTREE
        if depth >= subtree_settled and state.misfits():
            return CONSOLIDATED
        return None

    def take(depth, kind):
        """Count the combinations extending chosen[:depth], all refused for `kind` (or,
        for a complete one, whatever judge() says); judge them in order while their kind
        wants examples."""
        count = extending[depth]
        entry = tally.get(kind)
        if entry is not None and len(entry[1]) >= examples:
            entry[0] += count
            return {kind: count}
        prefix = tuple(chosen[:depth])
        problems = [judge(prefix + combo)[1] for combo in islice(
            product(*lists[depth:]), examples - len(entry[1]) if entry else examples)]
        kind = problems[0][0]
        entry = tally.setdefault(kind, [0, []])
        entry[0] += count
        entry[1].extend(problems[:examples - len(entry[1])])
        return {kind: count}

    def extensions(depth, failed):
        """Tally the combinations extending chosen[:depth] (pushed); their count per kind."""
        kind = settled_kind(depth, failed)
        if kind is not None or depth == size:
            return take(depth, kind)
        key = (depth, failed, state.holdings(depth, kinds))
        known = memory.get(key)
        if known is not None and all(len(tally[kind][1]) >= examples for kind in known):
            for kind, count in known.items():
                tally[kind][0] += count
            return known
        counts = {}
        for partial in lists[depth]:
            chosen[depth] = partial
            state.push(depth, partial)
            found = extensions(depth + 1, failed or not state.subtree_may_hold(depth))
            state.pop(depth, partial)
            for kind, count in found.items():
                counts[kind] = counts.get(kind, 0) + count
        memory[key] = counts
        return counts

    extensions(0, False)
    return tally


def provider_kinds(plan, lists):
    """rp -> its kind: providers of one kind are interchangeable in this anchor's search
    (swapping two maps every group's partials onto themselves and keeps every check's
    answer): the same partials up to their own id, the same inventory of the classes
    asked, the same root, and, with same_subtree, the same ancestors and descendants
    among the providers here."""
    facts = plan.facts
    seen = {}   # rp -> [its partials with itself left out, per group]
    for index, partials in enumerate(lists):
        for partial in partials:
            for rp in partial.providers + tuple(rp for rp, _ in partial.allocations):
                seen.setdefault(rp, set()).add((index, _without(partial, rp)))
    with_positions = any(plan.completed_at)
    providers = sorted(seen)
    kinds, names = {}, {}
    for rp in providers:
        inventory = tuple(sorted(
            (rc, facts.inventory.get((rp, rc))) for _, part in seen[rp]
            for owner, per_class in part[0] if owner is None for rc, _ in per_class))
        signature = (frozenset(seen[rp]), inventory, facts.root[rp])
        if with_positions:
            signature += (_relatives(facts.position, rp, providers),)
        kinds[rp] = names.setdefault(signature, len(names))
    return kinds


def _without(partial, rp):
    """The partial as sets, `rp` written None: equal for two providers iff each one's
    partial is the other's with the two swapped (neither appears in both)."""
    return (frozenset((None if owner == rp else owner, per_class)
                      for owner, per_class in partial.allocations),
            frozenset(None if owner == rp else owner for owner in partial.providers))


def _relatives(position, rp, providers):
    """(ancestors, descendants) of rp among `providers`."""
    above = frozenset(p for p in providers if p != rp and is_ancestor_or_self(position, p, rp))
    below = frozenset(p for p in providers if p != rp and is_ancestor_or_self(position, rp, p))
    return above, below
