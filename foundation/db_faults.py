"""What a database failure means to a client, said without the database's internals.

The API edge (foundation/api/exceptions.py) asks `kind(exc)` of every database error:

* UNAVAILABLE: the database cannot be reached or refuses the session (down, restarting,
  too many clients, the connection dropped under us). 503 with Retry-After.
* TIMED_OUT: a statement ran past [placement_database] statement_timeout, or the
  request's commit deadline passed (see below). The transaction was rolled back: 503.
* LOCK_TIMEOUT: a lock was waited for past [placement_database] lock_timeout: another
  writer holds it. Rolled back: 409 placement.concurrent_update for a write, 503 for a
  read (it has no conflict to report).

Only Django's OperationalError/InterfaceError are looked at, and in them the driver's
signs: psycopg2's SQLSTATE (`pgcode`; a failure to connect has none), SQLite's busy
timeout (a lock wait) or a file it cannot open. A MySQL driver's
errors plug in at `_driver_kind` (their `args[0]` error numbers: 1040, 2002, 2003, 2006,
2013 unavailable; 1205 lock wait timeout; 3024 max_execution_time).

A commit that fails because the connection went away leaves its outcome unknown: the
server may have committed before the connection broke. CommitGuard (a mixin of the
backend's DatabaseWrapper) marks such an error, and the answer says so, and it refuses
to commit once the request's deadline has passed (request_deadline()), so that no write
lands after the front door has told its client that the request timed out.
"""
import contextlib
import contextvars
import time

from django.db import Error, InterfaceError, OperationalError

UNAVAILABLE, TIMED_OUT, LOCK_TIMEOUT = "unavailable", "timed out", "lock timeout"

# PostgreSQL SQLSTATEs: class 08 connection exception, class 53 insufficient resources
# (53300 too many connections), 57P01-57P03 shutting down / starting up.
_PG_UNAVAILABLE_PREFIXES = ("08", "53", "57P01", "57P02", "57P03")
_PG_QUERY_CANCELED = "57014"        # statement_timeout
_PG_LOCK_NOT_AVAILABLE = "55P03"    # lock_timeout


class CommitTooLate(OperationalError):
    """The request's commit deadline passed: rolled back instead of committed."""


# MySQL/MariaDB error numbers: can't connect, gone away, lost, shutting down, a Galera
# node not ready; statement time limits (MariaDB, MySQL); a lock wait, and a deadlock or
# certification failure that no db_retry started over (the write services do).
_MYSQL_KINDS = {**dict.fromkeys((2003, 2006, 2013, 1053, 1047), UNAVAILABLE),
                **dict.fromkeys((1969, 3024), TIMED_OUT),
                **dict.fromkeys((1205, 1213, 3101), LOCK_TIMEOUT)}


def _driver_kind(driver_exc):
    driver = type(driver_exc).__module__.split(".")[0]
    if driver == "sqlite3":
        # SQLite's busy timeout ran out: another writer held the lock too long
        text = str(driver_exc).lower()
        if "locked" in text or "busy" in text:
            return LOCK_TIMEOUT
        return UNAVAILABLE if "unable to open" in text else None
    if driver == "pymysql":
        return _MYSQL_KINDS.get(driver_exc.args[0] if driver_exc.args else None)
    if driver != "psycopg2":
        return None
    pgcode = getattr(driver_exc, "pgcode", None)
    if pgcode == _PG_QUERY_CANCELED:
        return TIMED_OUT
    if pgcode == _PG_LOCK_NOT_AVAILABLE:
        return LOCK_TIMEOUT
    if pgcode is None or pgcode.startswith(_PG_UNAVAILABLE_PREFIXES):
        # psycopg2 gives no SQLSTATE when it cannot connect or the server went away
        return UNAVAILABLE
    return None


def kind(exc):
    """UNAVAILABLE, TIMED_OUT, LOCK_TIMEOUT or None (not a failure of the database)."""
    if isinstance(exc, CommitTooLate):
        return TIMED_OUT
    if isinstance(exc, InterfaceError):
        return UNAVAILABLE   # "connection already closed"
    if not isinstance(exc, OperationalError):
        return None
    if getattr(exc, "placement_kind", None):
        return exc.placement_kind
    cause = exc.__cause__
    if cause is None:
        return None   # Django's own OperationalErrors (e.g. SQLite's) are not ours
    return _driver_kind(cause)


def outcome_unknown(exc):
    return bool(getattr(exc, "placement_commit_outcome_unknown", False))


_deadline = contextvars.ContextVar("placement_commit_deadline", default=None)


@contextlib.contextmanager
def request_deadline(seconds):
    """No commit of this request after `seconds` from now (None: no deadline)."""
    token = _deadline.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


class CommitGuard:
    """DatabaseWrapper mixin: no commit past the deadline; a commit cut off by a lost
    connection is marked as of unknown outcome."""

    def _commit(self):
        deadline = _deadline.get()
        if deadline is not None and time.monotonic() > deadline:
            # atomic() rolls back on this error, as on any failed commit
            raise CommitTooLate("the request's time ran out before its commit")
        try:
            return super()._commit()
        except Error as exc:
            if kind(exc) == UNAVAILABLE:
                exc.placement_commit_outcome_unknown = True
            raise
