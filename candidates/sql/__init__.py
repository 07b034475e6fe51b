"""Set-based SQL for the allocation candidates engine.

One question per function; every function returns plain rows/sets/dicts of
integer ids (never model instances) and runs a constant number of
parameterised queries, whatever the number of providers. Plain SQL is kept
beside each query. Everything here runs on SQLite and PostgreSQL.

Provider sets are passed as a Scope: every provider of the trees whose
root id lies in a range (the engine walks anchors in root-id order and can
stop early), every provider of one tree, or an explicit list of ids.
"""
import json

from django.db import connection, connections

from foundation.db_routing import read_alias


def fetch(sql, params=()):
    """Run one query and return all rows as tuples (on a replica when the request
    may read from one, see foundation.db_routing)."""
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    # PyMySQL answers a tuple of rows; every caller gets a list, as from psycopg2/sqlite3
    return rows if isinstance(rows, list) else list(rows)


def fetch_links(sql, ids, scope, provider_column):
    """Rows of a link-table query for some ids (traits, aggregates) in scope.

    `sql` holds `{marks}`, one placeholder per id (deduplicated, ascending), and
    `{where}`, the scope's restriction of `provider_column`. No query runs, and
    no rows come back, when there are no ids or the scope is empty.
    """
    sql, params = links_query(sql, ids, scope, provider_column)
    return fetch(sql, params) if sql else []


def links_query(sql, ids, scope, provider_column):
    """(sql, params) of fetch_links(); (None, None) when it would run no query."""
    ids = sorted(set(ids))
    if not ids or scope.empty:
        return None, None
    where, params = scope.provider_filter(provider_column)
    return sql.format(marks=", ".join(["%s"] * len(ids)), where=where), ids + params


def in_ids(column, ids):
    """SQL fragment + params for `column IN ids` that takes one parameter, any size.

    PostgreSQL: column = ANY(%s::bigint[]) with the array as one text literal
    ('{1,2,3}'): the server then parses one constant, where a list parameter becomes
    ARRAY[1,2,3], one expression per id for the server to parse and plan, in every
    statement. MySQL: the integers written into the statement (PyMySQL interpolates
    every parameter on the client anyway), a plain IN list, which the optimizer sorts
    and searches as a range of the index (EXPLAIN: range on the primary key or
    provider_id), where JSON_TABLE would be a derived table joined row by row.
    SQLite: a json_each() table.
    """
    ids = [int(i) for i in ids]
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s::bigint[])", ["{" + ",".join(map(str, ids)) + "}"]
    if connection.vendor == "mysql":
        return f"{column} IN ({','.join(map(str, ids)) or 'NULL'})", []
    return f"{column} IN (SELECT value FROM json_each(%s))", [json.dumps(ids)]


class Scope:
    """Which providers a query looks at (see module docstring).

    Scope.everything(), Scope.roots_between(lo, hi) (lo <= root id < hi),
    Scope.tree(root_id), Scope.trees(root_ids), Scope.providers(ids).
    """

    __slots__ = ("kind", "lo", "hi", "ids", "_roots")

    def __init__(self, kind, lo=None, hi=None, ids=()):
        self.kind, self.lo, self.hi, self.ids = kind, lo, hi, tuple(ids)
        # holds_root is asked once per provider and anchor: a set, not a scan of the
        # ids (the cloud-wide why-not holds every root of the cloud)
        self._roots = frozenset(self.ids) if kind == "roots" else frozenset()

    @classmethod
    def everything(cls):
        return cls("all")

    @classmethod
    def roots_between(cls, lo, hi):
        return cls("range", lo, hi)

    @classmethod
    def tree(cls, root_id):
        return cls("range", root_id, root_id + 1)

    @classmethod
    def trees(cls, root_ids):
        return cls("roots", ids=root_ids)

    @classmethod
    def providers(cls, ids):
        return cls("ids", ids=ids)

    @property
    def empty(self):
        return self.kind in ("ids", "roots") and not self.ids

    def holds_root(self, root_id):
        """Is `root_id` an anchor of this scope? (ids scopes anchor nothing by range)"""
        if self.kind == "all":
            return True
        if self.kind == "range":
            return self.lo <= root_id < self.hi
        if self.kind == "roots":
            return root_id in self._roots
        return False

    def where(self, alias="rp"):
        """(" AND ...", params) restricting the provider table alias `alias`."""
        if self.kind == "all":
            return "", []
        if self.kind == "range":
            if self.hi == self.lo + 1:
                return f" AND {alias}.root_id = %s", [self.lo]
            return f" AND {alias}.root_id >= %s AND {alias}.root_id < %s", [self.lo, self.hi]
        column = "root_id" if self.kind == "roots" else "id"
        sql, params = in_ids(f"{alias}.{column}", self.ids)
        return " AND " + sql, params

    def provider_filter(self, column):
        """(" AND ...", params) restricting a provider id column, without a join
        when the scope is everything or a list of ids."""
        if self.kind in ("range", "roots"):
            where, params = self.where("srp")
            return (f" AND {column} IN (SELECT srp.id FROM resource_providers srp"
                    f" WHERE 1 = 1{where})", params)
        if self.kind == "ids":
            sql, params = in_ids(column, self.ids)
            return " AND " + sql, params
        return "", []
