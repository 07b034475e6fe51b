"""The provider-tree write lock.

django-mptt rewrites lft/rght/tree_id of many rows on every insert, move and
delete, so two concurrent tree writes can corrupt the nested sets. Every
service that creates, moves or deletes a provider calls lock_trees() inside
its transaction first.

PostgreSQL: a transaction-scoped advisory lock (released at COMMIT/ROLLBACK),
so tree writes from all gunicorn processes are serialised while readers are
not blocked. SQLite: writers are already serialised (immediate transactions
take the database write lock at BEGIN), so nothing is needed.
"""
from django.db import DEFAULT_DB_ALIAS, connections

# Arbitrary constant identifying "the provider forest" among advisory locks.
TREE_LOCK_KEY = 0x706C6163  # "plac"


def lock_trees(using=DEFAULT_DB_ALIAS):
    """Block until this transaction holds the tree write lock.

    Must be called inside transaction.atomic(); the lock lasts until the
    outermost transaction ends.
    """
    conn = connections[using]
    if not conn.in_atomic_block:
        raise RuntimeError("lock_trees() must be called inside a transaction")
    if conn.vendor == "postgresql":
        with conn.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [TREE_LOCK_KEY])
