"""The provider-tree guard: a row every tree write updates first.

django-mptt rewrites lft/rght/tree_id of many rows on every insert, move and delete, so
two concurrent tree writes can corrupt the nested sets. Every service that creates,
moves or deletes a provider calls lock_trees() inside its transaction first: it updates
the one row of tree_guard (migration 0008). One design on every database:

* one server (PostgreSQL, MySQL, SQLite): the row lock is held to COMMIT, so tree
  writers take turns there, in every process, while readers are not blocked (SQLite
  serialises writers anyway);
* Galera (and InnoDB Cluster): row locks are local to a node, but two tree writes on
  different nodes both wrote this row, so certification refuses the later one at COMMIT
  (error 1213), and foundation.db_retry starts it over, against the winner's trees.

A lock the cluster does not share (PostgreSQL's advisory locks, MySQL's GET_LOCK) would
let two nodes rewrite the same nested sets at once.
"""
from django.db import DEFAULT_DB_ALIAS, connections

GUARD_UPDATE = "UPDATE tree_guard SET writes = writes + 1 WHERE id = 1"
GUARD_INSERT = "INSERT INTO tree_guard (id, writes) VALUES (1, 1)"


def lock_trees(using=DEFAULT_DB_ALIAS):
    """Block until this transaction holds the tree guard (or, on Galera, has written it).

    Must be called inside transaction.atomic(); the guard is held until the outermost
    transaction ends.
    """
    conn = connections[using]
    if not conn.in_atomic_block:
        raise RuntimeError("lock_trees() must be called inside a transaction")
    with conn.cursor() as cursor:
        cursor.execute(GUARD_UPDATE)
        if cursor.rowcount == 0:   # the row is gone (a restore without it): put it back
            cursor.execute(GUARD_INSERT)
