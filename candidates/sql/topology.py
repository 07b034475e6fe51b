"""A process-local snapshot of the provider topology, answering the engine's topology
questions without a round trip.

What a candidates request reads besides usage (which changes with every claim) is the
shape of the cloud: the names of resource classes, traits and aggregates, the providers
with their uuids and trees, which provider has which trait and aggregate, and the
inventories. That changes when an operator or a compute service edits a provider, rarely
next to the claims. The functions of sql/ marked ``@answered_from_snapshot`` are then
answered by a Snapshot of those tables, read whole once and kept by each process, where
otherwise every request reads them again (most of its statements),
and capacity.inventory_groups() reads only the usage of the inventories it holds.

When the snapshot is used (``in_use()``, around one engine evaluation):

- Every write to those tables changes a token in the database (triggers of migrations
  providers 0006 and 0007 on the tables; a TRUNCATE too), in the writing transaction: on
  PostgreSQL at commit (a deferred trigger: concurrent writers wait for each other only
  while committing), on SQLite at once. A request reads the token first and uses the
  snapshot only if it was read under that token, so it never answers from a topology
  older than what was committed before the request began. Tokens are random, so a
  rolled-back change can never make an old snapshot look current.
- Inside a transaction (an open atomic block) the snapshot is not used: on PostgreSQL the
  transaction's own uncommitted changes have not moved the token yet.
- After a change, requests read from the database as before until the new token has
  been seen for PLACEMENT_TOPOLOGY_SETTLE_SECONDS (settings.py: a second); then one
  request reads the snapshot anew. A cloud whose topology keeps changing
  thus pays one read of the token per request, not a whole reload per change.
- optimistic_use() spares a settled process that read of the token: the request answers
  from the snapshot and reads the token with its first usage statement (or at its
  end), and the caller keeps the answer only if that token is the snapshot's; else it
  answers again the careful way. The answer kept still reflects every change committed
  before its statement ran; a process that finds its snapshot stale goes the careful
  way until its new snapshot is loaded.

Snapshot methods take and return exactly what the sql/ functions of the same name do
(rows in the same order), so the engine cannot tell them apart;
tests/candidates/test_topology_snapshot.py holds them to that.
"""
import contextvars
import functools
import threading
import time
from bisect import bisect_left
from contextlib import contextmanager

from django.conf import settings
from django.db import connections

from candidates.sql import fetch
from candidates.sql.rows import ProviderRow
from foundation.db_routing import read_alias

TOKEN_SQL = "SELECT token FROM topology_token WHERE id = 1"


def read_token():
    """The current token (None if its row was deleted)."""
    rows = fetch(TOKEN_SQL)
    return rows[0][0] if rows else None

_active = contextvars.ContextVar("topology_snapshot", default=None)
_unconfirmed = contextvars.ContextVar("topology_unconfirmed", default=None)


def answered_from_snapshot(function):
    """Route calls of a sql/ function to the Snapshot method of the same name while a
    snapshot is in use (in_use())."""
    name = function.__name__

    @functools.wraps(function)
    def routed(*args, **kwargs):
        snapshot = _active.get()
        if snapshot is not None:
            return getattr(snapshot, name)(*args, **kwargs)
        return function(*args, **kwargs)

    return routed


@contextmanager
def in_use():
    """Within it, the sql/ functions marked @answered_from_snapshot read this process's
    snapshot of the topology when it is current (see the module docstring), else the
    database. Yields the snapshot used (None: the database)."""
    snapshot = _current_snapshot()
    reset = _active.set(snapshot)
    try:
        yield snapshot
    finally:
        _active.reset(reset)


class OptimisticUse:
    """A snapshot used before its token was read: current() says, once the work is done,
    whether the snapshot was current."""

    def __init__(self, snapshot, alias):
        self.snapshot = snapshot
        self.alias = alias
        self.token = None   # the token read with a statement, once one read it

    def current(self):
        """Was the snapshot current? Reads the token unless a statement read it along."""
        if self.token is None:
            self.token = read_token()
        if self.token == self.snapshot.token:
            return True
        _seen(self.alias, self.token)
        return False


@contextmanager
def optimistic_use():
    """Yields an OptimisticUse when this process's snapshot is settled (the last token it
    saw is the snapshot's, outside a transaction), None otherwise (use in_use()). Within
    it the sql/ functions read the snapshot, and token_wanted() asks the first usage
    statement to read the token along (token_read())."""
    alias = read_alias()
    kept = _kept.get(alias)
    snapshot = kept.snapshot if kept is not None else None
    if (snapshot is None or kept.seen_token != snapshot.token
            or connections[alias].in_atomic_block):
        yield None
        return
    use = OptimisticUse(snapshot, alias)
    reset, reset_use = _active.set(snapshot), _unconfirmed.set(use)
    try:
        yield use
    finally:
        _unconfirmed.reset(reset_use)
        _active.reset(reset)


def active():
    """The snapshot the sql/ functions answer from now (None: the database)."""
    return _active.get()


def token_wanted():
    """Should the statement about to run read the token along?"""
    use = _unconfirmed.get()
    return use is not None and use.token is None


def token_read(token):
    """The token a statement read along (None: it returned no row to carry it)."""
    use = _unconfirmed.get()
    if use is not None and token is not None:
        use.token = token


class _Kept:
    """The snapshot of one database alias, and the token seen last and since when."""

    def __init__(self):
        self.snapshot = None
        self.seen_token = None
        self.seen_since = 0.0
        self.loading = threading.Lock()


_kept = {}
_kept_lock = threading.Lock()


def _current_snapshot():
    """This process's snapshot of the read alias if it is current, after loading it anew
    when the token has settled; None when the request must read the database."""
    alias = read_alias()
    connection = connections[alias]
    if connection.in_atomic_block:
        return None
    token = read_token()
    if token is None:
        return None   # its row was deleted: nothing to compare with until the next change
    now = time.monotonic()
    kept = _seen(alias, token, now)
    snapshot = kept.snapshot
    if snapshot is not None and snapshot.token == token:
        return snapshot
    if now - kept.seen_since < settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS:
        return None
    if not kept.loading.acquire(blocking=False):
        return None   # another thread of this process is loading it: don't wait
    try:
        snapshot = Snapshot.load()
        kept.snapshot = snapshot
    finally:
        kept.loading.release()
    return snapshot if snapshot.token == token else None


def _seen(alias, token, now=None):
    """Note the token read last for alias (and since when, if it is new); returns the
    alias's _Kept."""
    with _kept_lock:
        kept = _kept.get(alias)
        if kept is None:
            kept = _kept[alias] = _Kept()
    if kept.seen_token != token:
        kept.seen_token, kept.seen_since = token, time.monotonic() if now is None else now
    return kept


def tree_index_of(rows, positions=True):
    """({rp: root id}, {rp: (tree_id, lft, rght)}) of trees.providers rows (the second
    dict empty without positions): trees.tree_index(), and the snapshot's."""
    return ({row.id: row.root_id for row in rows},
            {row.id: row[4:] for row in rows} if positions else {})   # (tree_id, lft, rght)


def forget():
    """Drop every snapshot this process keeps (tests)."""
    with _kept_lock:
        _kept.clear()


class Snapshot:
    """The topology tables of one database as read under one token."""

    @classmethod
    def load(cls):
        """Read the token, then every table (the token first: a change committed in
        between makes the snapshot look older than it is, never newer)."""
        token = read_token()
        return cls(
            token,
            classes=fetch("SELECT id, name FROM resource_classes"),
            traits=fetch("SELECT id, name FROM traits"),
            aggregates=fetch("SELECT id, uuid FROM placement_aggregates"),
            providers=fetch("SELECT id, uuid, parent_id, root_id, tree_id, lft, rght"
                            " FROM resource_providers ORDER BY id"),
            provider_traits=fetch("SELECT provider_id, trait_id FROM resource_provider_traits"
                                  " ORDER BY provider_id, trait_id"),
            provider_aggregates=fetch("SELECT provider_id, aggregate_id"
                                      " FROM resource_provider_aggregates"
                                      " ORDER BY provider_id, aggregate_id"),
            inventories=fetch("SELECT provider_id, resource_class_id, total, reserved,"
                              " allocation_ratio, min_unit, max_unit, step_size"
                              " FROM inventories ORDER BY provider_id, resource_class_id"),
        )

    def __init__(self, token, *, classes, traits, aggregates, providers, provider_traits,
                 provider_aggregates, inventories=()):
        self.token = token
        self.class_ids = {name: id_ for id_, name in classes}
        self.class_name = dict(classes)
        self.trait_ids = {name: id_ for id_, name in traits}
        self.trait_name = dict(traits)
        self.aggregate_ids = {uuid: id_ for id_, uuid in aggregates}
        self.rows = list(map(ProviderRow._make, providers))    # ordered by id
        self.row_of = {row.id: row for row in self.rows}
        self.root_by_uuid = {row.uuid: row.root_id for row in self.rows}
        self.tree_rows = {}                                     # root id -> rows by id
        for row in self.rows:
            self.tree_rows.setdefault(row.root_id, []).append(row)
        self.roots = sorted(self.tree_rows)
        self.traits_of, self.trait_holders = _index(provider_traits)
        self.aggregates_of, self.aggregate_members = _index(provider_aggregates)
        self.has_parent = any(row.parent_id is not None for row in self.rows)
        # rp -> ((rc_id, total, reserved, allocation_ratio, min_unit, max_unit,
        # step_size), ...) in class order
        self.inventories_of = {}
        for rp, *inventory in inventories:
            self.inventories_of.setdefault(rp, []).append(tuple(inventory))
        self._inventory_groups_of_all = None
        # What the whole-database scope asks of every request, made once (a benign race:
        # two threads may both make one; either is right).
        self._index_of_all = None
        self._trait_names_of_all = None

    # --- scopes (candidates.sql.Scope) ---------------------------------------------------

    def _rows_in(self, scope):
        """The provider rows of a scope, ordered by id (a fresh list)."""
        if scope.kind == "all":
            return list(self.rows)
        if scope.kind == "ids":
            row_of = self.row_of
            return [row_of[rp] for rp in sorted(set(scope.ids)) if rp in row_of]
        tree_rows = self.tree_rows
        if scope.kind == "range":
            roots = self.roots[bisect_left(self.roots, scope.lo):bisect_left(self.roots, scope.hi)]
        else:
            roots = sorted({root for root in scope.ids if root in tree_rows})
        if len(roots) == 1:
            return list(tree_rows[roots[0]])
        rows = [row for root in roots for row in tree_rows[root]]
        rows.sort()
        return rows

    def _contains(self, scope):
        """rp -> is the provider in scope? (None: every provider is)"""
        if scope.kind == "all":
            return None
        if scope.kind == "ids":
            return set(scope.ids).__contains__
        row_of = self.row_of
        if scope.kind == "range":
            lo, hi = scope.lo, scope.hi
            return lambda rp: lo <= row_of[rp].root_id < hi
        roots = set(scope.ids)
        return lambda rp: row_of[rp].root_id in roots

    def _links(self, ids, scope, members, held):
        """Rows (rp, id) for the ids of a link table in scope; members: id -> [rp],
        held: rp -> (id, ...)."""
        ids = set(ids)
        if not ids or scope.empty:
            return []
        if scope.kind == "all":
            return [(rp, id_) for id_ in sorted(ids) for rp in members.get(id_, ())]
        return [(row.id, id_) for row in self._rows_in(scope) for id_ in held.get(row.id, ())
                if id_ in ids]

    # --- the sql/ functions -------------------------------------------------------------

    def ids_by_name(self, sharing_trait=None, every_class=False, root_bounds=False, **names):
        """names.ids_by_name()."""
        maps = {"classes": self.class_ids, "traits": self.trait_ids,
                "aggregates": self.aggregate_ids, "providers": self.root_by_uuid}
        found = {}
        for kind, wanted in names.items():
            known = maps[kind]
            if kind == "classes" and every_class:
                found[kind] = dict(known)
            else:
                found[kind] = {name: known[name] for name in wanted if name in known}
        if sharing_trait is not None:
            trait = self.trait_ids.get(sharing_trait)
            found["sharing"] = list(self.trait_holders.get(trait, ()))
        if root_bounds:
            found["root_bounds"] = ((self.roots[0], self.roots[-1]) if self.roots
                                    else (None, None))
            found["root_count"] = len(self.roots)
        return found

    def providers(self, scope, positions=True):
        """trees.providers(); the tree positions come along even when not asked for
        (they cost nothing here)."""
        if scope.empty:
            return []
        return self._rows_in(scope)

    def tree_index(self, scope, rows, positions=True):
        """trees.tree_index(); the positions come along even when not asked for. The
        index of every provider is made once: callers read it, never change it."""
        if scope.kind != "all":
            return tree_index_of(rows)
        if self._index_of_all is None:
            self._index_of_all = tree_index_of(self.rows)
        return self._index_of_all

    def any_provider_has_parent(self):
        """trees.any_provider_has_parent()."""
        return self.has_parent

    def root_ids(self):
        """trees.root_ids()."""
        return list(self.roots)

    def provider_traits(self, trait_ids, scope):
        """traits.provider_traits()."""
        return self._links(trait_ids, scope, self.trait_holders, self.traits_of)

    def provider_aggregates(self, aggregate_ids, scope):
        """aggregates.provider_aggregates()."""
        return self._links(aggregate_ids, scope, self.aggregate_members, self.aggregates_of)

    def provider_traits_and_aggregates(self, trait_ids, aggregate_ids, scope,
                                       trait_names=False):
        """links.provider_traits_and_aggregates()."""
        found = (self.provider_traits(trait_ids, scope),
                 self.provider_aggregates(aggregate_ids, scope))
        return found + (self.trait_names(scope),) if trait_names else found

    def trait_names(self, scope):
        """summaries.trait_names(); those of every provider are listed once: callers read
        the list, never change it."""
        if scope.empty:
            return []
        if scope.kind == "all" and self._trait_names_of_all is not None:
            return self._trait_names_of_all
        traits_of, name = self.traits_of, self.trait_name
        found = [(row.id, name[trait]) for row in self._rows_in(scope)
                 for trait in traits_of.get(row.id, ())]
        if scope.kind == "all":
            self._trait_names_of_all = found
        return found

    def inventory_groups(self, scope, rc_ids=None, exclude_rc_ids=()):
        """capacity.inventory_groups() without the usage: [((rc_id, total, reserved,
        allocation_ratio, min_unit, max_unit, step_size), [rp_id, ...]), ...], providers
        in id order (capacity.add_usage() adds the usage)."""
        wanted = set(rc_ids) if rc_ids is not None else None
        excluded = set(exclude_rc_ids)

        def included(rc):
            return (wanted is None or rc in wanted) and rc not in excluded

        if scope.kind == "all":
            if self._inventory_groups_of_all is None:
                self._inventory_groups_of_all = self._grouped_inventories(self.rows)
            return [(key, rps) for key, rps in self._inventory_groups_of_all
                    if included(key[0])]
        return [(key, rps) for key, rps in self._grouped_inventories(self._rows_in(scope))
                if included(key[0])]

    def _grouped_inventories(self, rows):
        groups = {}
        inventories_of = self.inventories_of
        for row in rows:
            rp = row.id
            for key in inventories_of.get(rp, ()):
                providers = groups.get(key)
                if providers is None:
                    providers = groups[key] = []
                providers.append(rp)
        return list(groups.items())

    def uuids(self, ids):
        """summaries.uuids()."""
        row_of = self.row_of
        return {rp: row_of[rp].uuid for rp in ids if rp in row_of}

    def class_names(self, ids):
        """summaries.class_names()."""
        name = self.class_name
        return {rc: name[rc] for rc in ids if rc in name}

    def sharing_anchor_roots(self, sharing_ids, scope):
        """aggregates.sharing_anchor_roots()."""
        if not sharing_ids or scope.empty:
            return []
        contains = self._contains(scope)
        row_of, members = self.row_of, self.aggregate_members
        found = set()
        for rp in set(sharing_ids):
            for aggregate in self.aggregates_of.get(rp, ()):
                for member in members[aggregate]:
                    if contains is None or contains(member):
                        found.add((rp, row_of[member].root_id))
        return sorted(found)


def _index(links):
    """Rows (rp, id) ordered by rp, id -> ({rp: (id, ...)}, {id: [rp, ...]}), both in
    ascending order."""
    held, members = {}, {}
    for rp, id_ in links:
        held.setdefault(rp, []).append(id_)
        members.setdefault(id_, []).append(rp)
    return ({rp: tuple(ids) for rp, ids in held.items()},
            {id_: sorted(rps) for id_, rps in members.items()})
