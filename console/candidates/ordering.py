"""The explorer's orders of an answer, its tree name filter and its pages (never the
API's: GET /allocation_candidates answers in the engine's order).

An answer is narrowed and sorted as a whole, before the page is cut from it,
so page 1 of an order holds the first candidates of the whole answer in that order;
what it costs is a sort key per tree or per candidate, not a page rendered per
candidate. Sorts are stable: candidates with equal keys keep the API's order.

ORDERS:

* "name": by the name of the candidate's tree root (natural order, numbers by value,
  as the UI sorts sibling names: console.sorting.name_order);
* "most_room", "least_room": by the room the candidate leaves (room_left), largest or
  smallest first.
"""
from collections import Counter

from candidates.sql import Scope, capacity, trees
from console.sorting import name_order
from providers.rules import reported_capacity

ORDERS = ("name", "most_room", "least_room")


def room_left(figures):
    """The room a candidate leaves: the smallest share of a provider's capacity of a
    class that the candidate leaves free, over its allocations, as a fraction
    (0.25: a quarter of that capacity still free); None for no allocation.
    figures: (capacity, used, amount) of each allocation of a class on a provider,
    capacity as provider summaries report it."""
    shares = [(capacity - used - amount) / capacity if capacity > 0 else 0.0
              for capacity, used, amount in figures]
    return min(shares) if shares else None


class Listing:
    """One page of an answer in an order, narrowed to trees by name: called with the
    engine's whole Answer (engine.find_answer), it returns the candidates of the page
    (for engine.summarise) and then tells what the page needs to say of the whole answer.

    per_page: None for the whole answer; page: 1-based (past the last page: the last).
    After the call: answered (candidates in the answer), total (those left by the name
    filter), page (the page shown), trees (the tree of each candidate returned),
    tree_counts (root id -> its candidates in the narrowed answer); tree_uuids (the uuid
    of each of trees) once the caller has read them.
    """

    def __init__(self, order=None, named=None, page=1, per_page=None):
        self.order, self.named = order, named
        self.page, self.per_page = page, per_page
        self.answered = self.total = 0
        self.trees, self.tree_counts, self.tree_uuids = [], Counter(), []

    def __call__(self, answer):
        found = answer.candidates
        tree_of = [answer.tree_of(candidate) for candidate in found]
        found, tree_of = arrange(found, tree_of, self.order, self.named, answer.batches)
        self.answered, self.total = len(answer.candidates), len(found)
        self.tree_counts = Counter(tree_of)
        start, stop = 0, len(found)
        if self.per_page is not None:
            last = max(1, -(-len(found) // self.per_page))
            self.page = min(self.page, last)
            start = (self.page - 1) * self.per_page
            stop = start + self.per_page
        self.trees = tree_of[start:stop]
        return found[start:stop]


def arrange(found, tree_of, order=None, named=None, batches=()):
    """(candidates, their trees) of `found` (candidates) and `tree_of` (the root id of
    each) narrowed to the trees with a provider whose name contains `named` (None: all;
    matched as the why-not explainer matches, trees.roots_named_like) and sorted by
    `order` (one of ORDERS; None: as found). batches: the engine's Facts of the batches
    read, whose inventory rows give the room of the candidates (one more query for
    providers they did not read). At most two queries."""
    if order is None and named is None:
        return found, tree_of
    kept = range(len(found))
    if named is not None:
        matching = set(trees.roots_named_like(named))
        kept = [i for i in kept if tree_of[i] in matching]
    if order == "name":
        roots = {tree_of[i] for i in kept}
        named_as = trees.names(sorted(roots))
        key = {root: name_order(named_as.get(root, "")) for root in roots}
        kept = sorted(kept, key=lambda i: key[tree_of[i]])
    elif order in ("most_room", "least_room"):
        rooms = candidate_rooms([found[i] for i in kept], batches)
        # candidates without allocations (no room to speak of) last either way
        sign = -1 if order == "most_room" else 1
        key = {i: (room is None, sign * (room or 0)) for i, room in zip(kept, rooms)}
        kept = sorted(kept, key=key.__getitem__)
    elif order is not None:
        raise ValueError(f"unknown order {order!r}")
    return [found[i] for i in kept], [tree_of[i] for i in kept]


def candidate_rooms(candidates, batches):
    """room_left of each candidate, from the inventories of the batches' Facts (and one
    read of those of providers outside them: sharing providers of a limited walk)."""
    wanted = {(rp, rc) for allocations, _ in candidates for rp, pairs in allocations
              for rc, _ in pairs}
    figures = {}   # (rp, rc) -> (capacity, used)
    for facts in batches:
        _add_figures(figures, wanted, facts.inventory_groups or ())
    missing = wanted - figures.keys()
    if missing:
        scope = Scope.providers(sorted({rp for rp, _ in missing}))
        _add_figures(figures, missing, capacity.inventory_groups(
            scope, rc_ids=sorted({rc for _, rc in missing})))
    rooms, known = [], {}   # allocations -> their room: the same ones recur
    for allocations, _ in candidates:
        if allocations not in known:
            known[allocations] = room_left(
                [(*figures[(rp, rc)], amount) for rp, pairs in allocations
                 for rc, amount in pairs if (rp, rc) in figures])
        rooms.append(known[allocations])
    return rooms


def _add_figures(figures, wanted, groups):
    """figures[(rp, rc)] = (capacity, used) for the wanted pairs of these inventory
    groups (capacity.inventory_groups)."""
    for key, rps in groups:
        shown = None
        for rp in rps:
            if (rp, key.rc_id) in wanted:
                if shown is None:
                    shown = (reported_capacity(key.total, key.reserved, key.allocation_ratio),
                             key.used)
                figures[(rp, key.rc_id)] = shown
