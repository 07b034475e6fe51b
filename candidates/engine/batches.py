"""Generation: anchors (root providers) walked in ascending id order, in batches.

Without a limit there is one batch, the whole database. A limited request reads
growing root-id ranges; for each batch it loads the facts (facts.py), computes every
group's partial candidates (candidate_set.py) and combines them (combine.py), stopping
as soon as it has the candidates it needs. A batch that comes up short sends the next
one past the trees with no room for the request (capacity.first_root_with_room).
"""
import math

from candidates import candidate_set, combine
from candidates.engine.facts import load_facts
from candidates.sql import Scope, capacity, trees

# The fewest root ids a limited walk's first batch spans: a smaller first batch too
# often comes up short where the first hosts are full, and a larger one reads more
# trees than a small limit needs.
FIRST_BATCH_ROOT_IDS = 16

# A limited walk reads every root left in one batch once the cap seems to lie past this
# share of them (one statement per kind then beats more doubling batches, each with
# its own), and sizes its batches with this margin over the root ids the yield so far
# says the cap needs.
REST_AT_ONCE_SHARE = 0.5
REACH_MARGIN = 1.25

# A batch spanning at most this share of the root ids names its providers by id (see
# facts.load_facts); a larger one reads the link tables whole, which is then cheaper
# than probing the indexes once per provider.
BY_ID_UP_TO_SHARE = 0.1


def drops_same_tree(query):
    """Below 1.29 with a provider tree anywhere in the database, candidates using two
    providers of one tree are dropped (§4.5, Quirk Q7)."""
    return not query.nested_aware and trees.any_provider_has_parent()


def generate(evaluation, cap, drop_same_tree, breadth_first, every_class=False,
             trait_names=False):
    """Distinct candidates in anchor order (breadth_first: one per anchor in turn), at
    most `cap` (None: all); rp -> root; and the Facts of the batches read.
    drop_same_tree: below 1.29, drop candidates using two providers of one tree;
    every_class, trait_names: what the batches read for the summaries (see
    facts.load_facts)."""
    query, groups = evaluation.query, evaluation.groups()
    unsuffixed_tree = next((g.in_tree_root for g in groups
                            if not g.suffixed and g.in_tree_root is not None), None)
    found, seen, roots, batches = [], set(), {}, []
    # taking turns between anchors needs all of them in one batch
    names = evaluation.names
    for scope, by_id in batch_scopes(None if breadth_first else cap, unsuffixed_tree,
                                     names.root_bounds, _room_finder(evaluation),
                                     lambda: len(found), names.root_count):
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


def batch_scopes(cap, tree_root, root_bounds, first_root_with_room=None, found_so_far=None,
                 root_count=None):
    """Batches of anchors, each as (scope, by_id) (see facts.load_facts): all at once
    without a cap, else growing root-id ranges between root_bounds (lowest, highest
    root id, resolve.Names). first_root_with_room(start): where to start the next batch
    of a limited request, past trees that have no room for it (None: no such test).
    found_so_far(): the candidates the batches gave so far; from their yield per root
    id, a batch reaches as far as the cap seems to lie, and the rest of the roots come
    in one batch when the cap seems to lie past half of them. root_count: how many
    roots lie between the bounds (None: as many as ids), so that the first batch spans
    as many trees as candidates wanted (at least FIRST_BATCH_ROOT_IDS ids), however
    sparse the root ids are."""
    if tree_root is not None:
        yield Scope.tree(tree_root), True
        return
    if cap is None:
        yield Scope.everything(), False
        return
    low, high = root_bounds
    if low is None:
        return
    # as many trees as candidates wanted (one per tree when all qualify); the batches
    # that follow double until the cap is reached. Trees created side by side interleave
    # their providers' ids (1,000 trees of 7 written by ten clients: a root every 7 ids),
    # and a span of `cap` ids would hold a seventh of the trees wanted: a second batch,
    # with its own statements and a search for room, then costs more than the whole
    # database read in one.
    ids_per_root = (high - low + 1) / root_count if root_count else 1
    size = max(FIRST_BATCH_ROOT_IDS, math.ceil(cap * ids_per_root))
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
