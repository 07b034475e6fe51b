"""One whole transaction, started over when the database says it lost a race.

Several writers (gunicorn workers, API servers, Galera nodes) may change the same rows.
Every invariant is guarded by rows both conflicting writers write (generations compared
and swapped, the tree guard of providers/services/tree_lock.py, unique keys), so the
database finds the conflict wherever the writers run: as a deadlock (MySQL
1213, PostgreSQL 40P01), a serialization failure (40001), or on Galera and InnoDB
Cluster as a deadlock error at COMMIT on the node that lost certification. The
database has then rolled the whole transaction back (InnoDB does on a deadlock, so a
savepoint cannot be retried), so the whole transaction runs again: every write
service that owns its transaction is decorated with `retrying` (allocations_replace
has its own loop, which also retries generation conflicts), and `run(work)` opens one
for other callers; either retries a bounded number of times with a jittered, growing pause, and answers the
caller only after COMMIT. When every attempt lost: ConcurrentUpdate, Placement's 409
placement.concurrent_update.

Not retried here: a lost or refused connection (the server went away: the API edge
answers it, issue 40), and anything else. Nested inside a transaction someone else
opened, `run` runs once and lets a conflict rise to the outermost `run`, the one place
a retry can start the transaction over.
"""
import functools
import logging
import random
import time

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction

from foundation.domain_errors import ConcurrentUpdate

LOG = logging.getLogger("placement.db_retry")

# Tree writes on several Galera nodes all write the tree guard: under a burst a loser
# can lose again, so the pauses grow (up to 0.64 s before the last of 8 attempts;
# about 1.3 s in all at worst, only when every attempt lost).
ATTEMPTS = 8
PAUSE = 0.01   # seconds: the first pause is up to this long, each next one up to twice

# MySQL/MariaDB error numbers: 1213 deadlock (also Galera's and group replication's
# certification failure), 1020 "record has changed" (MariaDB's snapshot isolation), 3101
# "plugin instructed the server to roll back" (group replication at COMMIT), 1180 "got
# error during COMMIT".
MYSQL_RETRYABLE = {1213, 1020, 3101, 1180}
# PostgreSQL SQLSTATEs: serialization failure, deadlock.
POSTGRESQL_RETRYABLE = {"40001", "40P01"}
# A lock waited for past [placement_database] lock_timeout (MySQL 1205, PostgreSQL
# 55P03) is not started over: it has waited as long as the operator allows already, and
# eight more waits would outlast the front door. The API edge answers it 409, nothing
# applied (foundation/db_faults.py).


def is_retryable(exc):
    """Did the database refuse this transaction for a concurrent one (start it over)?"""
    if not isinstance(exc, DatabaseError):
        return False
    cause = exc.__cause__ or exc
    code = getattr(cause, "pgcode", None)
    if code is not None:
        return code in POSTGRESQL_RETRYABLE
    args = getattr(cause, "args", ())
    if args and isinstance(args[0], int):
        return args[0] in MYSQL_RETRYABLE
    # SQLite: the busy timeout ran out while another writer held the database.
    text = str(exc).lower()
    return "database is locked" in text or "database table is locked" in text


def run(work, using=DEFAULT_DB_ALIAS, attempts=ATTEMPTS):
    """work() in a transaction of its own, started over (at most `attempts` times in
    all) while the database refuses it for a concurrent one; returns what it returned,
    after COMMIT. Raises ConcurrentUpdate when every attempt was refused."""
    def transaction_of_its_own():
        with transaction.atomic(using=using):
            return work()
    return _attempts(transaction_of_its_own, using, attempts)


def retrying(function):
    """Decorator for a service that opens its own transaction around all its work
    (`with transaction.atomic():`): a call outside any transaction is started over
    while the database refuses it (its COMMIT included) for a concurrent one. No
    transaction is added, so the service's own stays the outermost (no savepoint)."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return _attempts(lambda: function(*args, **kwargs), DEFAULT_DB_ALIAS, ATTEMPTS)
    return wrapper


def _attempts(call, using, attempts):
    if connections[using].in_atomic_block:
        return call()   # a conflict rises to whoever opened the transaction
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except DatabaseError as exc:
            if not is_retryable(exc):
                raise
            LOG.info("transaction refused for a concurrent one (attempt %d of %d): %s",
                     attempt, attempts, " ".join(str(exc).split())[:200])
        if attempt < attempts:
            time.sleep(random.uniform(0, PAUSE * 2 ** (attempt - 1)))
    raise ConcurrentUpdate("Another writer changed the same data at the same time and "
                           "this write was refused after several attempts; nothing of "
                           "this request was applied. Please retry.")
