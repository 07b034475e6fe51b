"""What a database failure means to a client, said without the database's internals.

The API edge (foundation/api/exceptions.py) asks `kind(exc)` of every database error:

* UNAVAILABLE: the database cannot be reached or refuses the session or the statement
  (down, restarting, shutting down, too many clients, read-only, out of disk, the
  connection dropped under us or no answer within round_trip_timeout). 503 with
  Retry-After.
* TIMED_OUT: a statement ran past [placement_database] statement_timeout, or the
  request's commit deadline passed (see below). The transaction was rolled back: 503.
* LOCK_TIMEOUT: a lock was waited for past [placement_database] lock_timeout: another
  writer holds it. Rolled back: 409 placement.concurrent_update for a write, 503 for a
  read (it has no conflict to report).

The driver's signs decide, one table per family below: psycopg2's SQLSTATE (`pgcode`; a
failure to connect or a dropped connection has none), PyMySQL's error number
(`args[0]`), SQLite's busy timeout or a file it cannot open. tests/api/
test_database_refusals.py shows each code's answer through the whole stack.

A COMMIT whose connection breaks leaves its outcome unknown to us: the server may have
committed before the connection broke. CommitGuard (a mixin of the backends'
DatabaseWrapper) then finds out before anything is answered (look_up_outcome): it
reconnects and asks PostgreSQL's txid_status() of the transaction's id, when the same
server is still up (a restarted or promoted server may have handed the id out again);
else it reads back the marker the transaction wrote (commit_marker: the change log's
entry). Committed: the request carries on as if the COMMIT had answered. Not committed:
503 saying it was not applied. Only when neither can be known in
[placement_database] outcome_lookup_timeout: 503 "may or may not have been applied".
CommitGuard also refuses to commit once the request's deadline has passed
(request_deadline()), so that no write lands after the front door has told its client
that the request timed out.
"""
import contextlib
import contextvars
import logging
import time

from django.conf import settings
from django.db import DatabaseError, Error, InterfaceError, OperationalError, connections

LOG = logging.getLogger(__name__)

UNAVAILABLE, TIMED_OUT, LOCK_TIMEOUT = "unavailable", "timed out", "lock timeout"
# What a lost COMMIT turned out to be (outcome(exc)); None: not a lost COMMIT.
NOT_APPLIED, OUTCOME_UNKNOWN = "not applied", "outcome unknown"

# PostgreSQL SQLSTATEs (prefixes): class 08 connection exception, class 53 insufficient
# resources (53100 disk full, 53200 out of memory, 53300 too many connections), 57P01
# admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now (starting up), 57P05
# idle session timeout, 25006 read-only transaction (a standby, or a primary demoted to
# one), 25P03 idle-in-transaction timeout, 58030 I/O error.
_PG_UNAVAILABLE_PREFIXES = ("08", "53", "57P01", "57P02", "57P03", "57P05", "25006",
                            "25P03", "58030")
_PG_QUERY_CANCELED = "57014"        # statement_timeout
_PG_LOCK_NOT_AVAILABLE = "55P03"    # lock_timeout


class CommitTooLate(OperationalError):
    """The request's commit deadline passed: rolled back instead of committed."""


# MySQL/MariaDB error numbers (server errors, and the client library's 2000s).
_MYSQL_KINDS = {
    **dict.fromkeys((
        1040,         # too many connections
        1203, 1226,   # the user's max_user_connections / resource limit
        1045, 1049,   # access denied, unknown database (at connect: the service is down)
        2002, 2003,   # can't connect (socket, TCP)
        2005,         # unknown server host (name resolution)
        2006, 2013,   # server has gone away, lost connection (also: no answer in time)
        2055,         # lost connection (with a system error)
        2027,         # malformed packet: the stream is broken (mysqlclient's word for an
                      # error packet it cannot read where PyMySQL says 2006 or 2013)
        1053,         # server shutdown in progress
        1927,         # connection killed (MariaDB)
        4031,         # disconnected by the server for inactivity (MySQL)
        1317,         # query interrupted (KILL QUERY)
        1047,         # Galera node not ready (not in the primary component)
        1290, 1836,   # read-only (read_only, super_read_only / read-only mode)
        1021, 1114,   # disk full, table full
        1037, 1038, 1041,   # out of memory
    ), UNAVAILABLE),
    **dict.fromkeys((1969, 3024), TIMED_OUT),   # max_statement_time, max_execution_time
    # a lock wait, and a deadlock or certification failure that no db_retry started over
    **dict.fromkeys((1205, 1213, 3101), LOCK_TIMEOUT),
}


def _driver_kind(driver_exc, operational):
    driver = type(driver_exc).__module__.split(".")[0]
    if driver == "sqlite3":
        # SQLite's busy timeout ran out: another writer held the lock too long
        text = str(driver_exc).lower()
        if "locked" in text or "busy" in text:
            return LOCK_TIMEOUT
        return UNAVAILABLE if "unable to open" in text else None
    if driver in ("pymysql", "MySQLdb"):   # PyMySQL or mysqlclient (foundation/mysql/driver.py)
        return _MYSQL_KINDS.get(driver_exc.args[0] if driver_exc.args else None)
    if driver != "psycopg2":
        return None
    pgcode = getattr(driver_exc, "pgcode", None)
    if pgcode == _PG_QUERY_CANCELED:
        return TIMED_OUT
    if pgcode == _PG_LOCK_NOT_AVAILABLE:
        return LOCK_TIMEOUT
    if pgcode is None:
        # psycopg2 gives no SQLSTATE when it cannot connect or the server went away
        return UNAVAILABLE if operational else None
    return UNAVAILABLE if pgcode.startswith(_PG_UNAVAILABLE_PREFIXES) else None


def kind(exc):
    """UNAVAILABLE, TIMED_OUT, LOCK_TIMEOUT or None (not a failure of the database)."""
    if isinstance(exc, CommitTooLate):
        return TIMED_OUT
    if isinstance(exc, InterfaceError):
        return UNAVAILABLE   # "connection already closed"
    if not isinstance(exc, DatabaseError):
        return None
    if getattr(exc, "placement_kind", None):
        return exc.placement_kind
    cause = exc.__cause__
    if cause is None:
        return None   # Django's own errors (e.g. SQLite's) are not ours
    # PostgreSQL's read-only refusal is an InternalError, MySQL's can be any class
    return _driver_kind(cause, isinstance(exc, OperationalError))


def outcome(exc):
    """NOT_APPLIED or OUTCOME_UNKNOWN for a COMMIT that lost its connection, else None."""
    return getattr(exc, "placement_commit_outcome", None)


def outcome_unknown(exc):
    return outcome(exc) == OUTCOME_UNKNOWN


_deadline = contextvars.ContextVar("placement_commit_deadline", default=None)


@contextlib.contextmanager
def request_deadline(seconds):
    """No commit of this request after `seconds` from now (None: no deadline)."""
    token = _deadline.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def commit_marker(using, sql, params):
    """Name a row the running transaction writes: `sql` (with `params`) selects it, and
    finds it iff the transaction committed. A COMMIT that loses its connection is then
    looked up by it (the change log names its entry). The first marker of a transaction
    is kept, unless the savepoint it was written in is rolled back."""
    wrapper = connections[using]
    if wrapper.in_atomic_block and getattr(wrapper, "placement_marker", None) is None:
        wrapper.placement_marker = (sql, tuple(params), len(wrapper.savepoint_ids))


PENDING = object()   # the old session may still be committing: ask again
# The most a round trip of the lookup may take (its time left); None outside a lookup.
lookup_time_left = contextvars.ContextVar("placement_lookup_time_left", default=None)


class CommitGuard:
    """DatabaseWrapper mixin: no commit past the deadline; a commit cut off by a lost
    connection is looked up, and answered by what it turned out to be.

    A backend provides commit_facts() (what the lookup will need, taken before COMMIT)
    and outcome_on(raw, facts, marker) (True, False, None: unknowable, or PENDING),
    asked on a new raw connection from lookup_connection(), whose round trips take at
    most lookup_time_left."""

    placement_marker = None

    def _commit(self):
        deadline = _deadline.get()
        if deadline is not None and time.monotonic() > deadline:
            # atomic() rolls back on this error, as on any failed commit
            raise CommitTooLate("the request's time ran out before its commit")
        marker, self.placement_marker = self.placement_marker, None
        if self.connection is None:
            return super()._commit()
        # Failing here is failing before COMMIT was sent: nothing applied.
        facts = self.commit_facts()
        try:
            return super()._commit()
        except Error as exc:
            if kind(exc) != UNAVAILABLE:
                raise
            self._drop_connection()
            committed = self.look_up_outcome(facts, marker)
            LOG.warning("the connection was lost during COMMIT (%s); it %s",
                        " ".join(str(exc).split())[:200],
                        {True: "was committed", False: "was not applied",
                         None: "may or may not have been applied"}[committed])
            if committed:
                return None   # as if the COMMIT had answered
            exc.placement_commit_outcome = (NOT_APPLIED if committed is False
                                            else OUTCOME_UNKNOWN)
            raise

    def _rollback(self):
        self.placement_marker = None
        return super()._rollback()

    def _savepoint_rollback(self, sid):
        # atomic() pops the savepoint first: a marker written deeper is rolled back too
        if self.placement_marker and self.placement_marker[2] > len(self.savepoint_ids):
            self.placement_marker = None
        return super()._savepoint_rollback(sid)

    def set_autocommit(self, autocommit, *args, **kwargs):
        if autocommit and self.connection is None and not self.in_atomic_block:
            # Dropped after a lost COMMIT: atomic() ends by turning autocommit back on,
            # and Django would reconnect for that, and its failure (the database still
            # down) would replace the COMMIT's own error. The next query connects, in
            # autocommit.
            self.autocommit = True
            if self.run_commit_hooks_on_set_autocommit_on:
                self.run_commit_hooks_on_set_autocommit_on = False
                self.run_and_clear_commit_hooks()
            return
        super().set_autocommit(autocommit, *args, **kwargs)

    def _set_autocommit(self, autocommit):
        try:
            return super()._set_autocommit(autocommit)
        except Error as exc:
            # Turning autocommit back on is a round trip on MySQL, after the COMMIT (or
            # ROLLBACK) has been answered: the transaction's outcome is known, and a
            # server lost now must not turn a saved write into a failure. The next
            # query connects, in autocommit (set_autocommit goes on to say so).
            if not autocommit or self.in_atomic_block or kind(exc) != UNAVAILABLE:
                raise
            LOG.warning("the connection was lost after its transaction ended (%s)",
                        " ".join(str(exc).split())[:200])
            self._drop_connection()

    def _drop_connection(self):
        try:
            self._close()
        except Exception:   # already broken: closing it is all we wanted
            pass
        self.connection = None

    def look_up_outcome(self, facts, marker):
        """True committed, False not applied, None unknowable in the time allowed.
        `facts` False: the transaction wrote nothing, so the database holds what it
        would after the COMMIT either way: as committed."""
        if facts is False:
            return True
        seconds = settings.PLACEMENT_DB_OUTCOME_LOOKUP_TIMEOUT
        deadline = _deadline.get()
        if deadline is not None:
            seconds = min(seconds, deadline - time.monotonic())
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            token = lookup_time_left.set(max(0.5, until - time.monotonic()))
            try:
                raw = self.lookup_connection()
                try:
                    found = self.outcome_on(raw, facts, marker)
                finally:
                    raw.close()
                if found is not PENDING:
                    return found
            except Exception as exc:   # still down: ask again until the time is up
                LOG.info("looking up a lost COMMIT: %s", " ".join(str(exc).split())[:200])
            finally:
                lookup_time_left.reset(token)
            time.sleep(min(0.25, max(0, until - time.monotonic())))
        return None


def marker_found(cursor, marker):
    sql, params, _ = marker
    cursor.execute(sql, params)
    return cursor.fetchone() is not None
