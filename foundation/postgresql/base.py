"""Django's PostgreSQL backend, with a health check that sends nothing to the server.

With CONN_HEALTH_CHECKS, Django checks a kept connection before the first query of each
request, so that one the server closed in the meantime (a restart, pgbouncer dropping
idle clients, pg_terminate_backend) is replaced instead of failing the request. Its
check runs `SELECT 1`: a round trip on every request (0.1-0.3 ms, up to a tenth of a
small request). An idle connection has nothing to read unless the server sent something
unasked, and a server closing the connection is such a message (an error, then end of
file), so polling the socket answers the same question without a round trip. As with
`SELECT 1`, a connection whose transaction has failed is not usable.

Also: every round trip waits at most round_trip_timeout (wait(), psycopg2's wait
callback), and a COMMIT that lost its connection is looked up by txid_status()
(commit_facts, outcome_on; foundation/db_faults.py).
"""
import contextlib
import select
import socket
import time

from django.conf import settings
from django.db.backends.postgresql import base
from psycopg2 import extensions

from foundation import db_faults
from foundation.db_faults import CommitGuard
from foundation.db_pool import BoundedConnections


def wait(raw):
    """psycopg2's wait callback: every round trip (and the connection's start) waits at
    most [placement_database] round_trip_timeout (during a lost COMMIT's lookup, its
    time left; while connecting, connect_timeout when the URL sets one). The server
    enforces statement_timeout itself, but a server that is frozen or cut off answers
    nothing, and libpq would wait as long as the freeze. Past the limit the socket is
    shut down, so that libpq fails the way it does on any lost connection."""
    limit = getattr(settings, "PLACEMENT_DB_ROUND_TRIP_TIMEOUT", 0) or None
    left = db_faults.lookup_time_left.get()
    if left is not None:
        limit = min(limit or left, left)
    if raw.status == extensions.STATUS_SETUP:   # connecting
        connect_timeout = raw.info.dsn_parameters.get("connect_timeout")
        if connect_timeout and connect_timeout.isdigit() and int(connect_timeout) > 0:
            limit = min(limit or int(connect_timeout), int(connect_timeout))
    deadline = None if limit is None else time.monotonic() + limit
    while True:
        state = raw.poll()
        if state == extensions.POLL_OK:
            return
        events = select.POLLIN if state == extensions.POLL_READ else select.POLLOUT
        waiting = select.poll()
        waiting.register(raw.fileno(), events)
        timeout = None if deadline is None else max(0, deadline - time.monotonic()) * 1000
        if not waiting.poll(timeout):
            _cut(raw)


def _cut(raw):
    try:
        with socket.socket(fileno=socket.dup(raw.fileno())) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


extensions.set_wait_callback(wait)


@contextlib.contextmanager
def without_round_trip_limit():
    """psycopg2 refuses COPY while a wait callback is set (the callback is
    process-wide): the upstream import, a command running in one thread, lifts the
    round-trip limit around its COPY statements only."""
    extensions.set_wait_callback(None)
    try:
        yield
    finally:
        extensions.set_wait_callback(wait)


class DatabaseWrapper(CommitGuard, BoundedConnections, base.DatabaseWrapper):
    """Also: no commit past the request's deadline, a commit cut off by a lost connection
    is looked up (db_faults); served processes hold a bounded number of connections and
    release idle ones (db_pool). A MySQL backend takes the same two mixins."""

    def commit_facts(self):
        """The transaction's id (None: it wrote nothing), its backend and the server's
        start: one round trip before each COMMIT."""
        with self.wrap_database_errors, self.connection.cursor() as cursor:
            cursor.execute("SELECT txid_current_if_assigned(), pg_backend_pid(), "
                           "pg_postmaster_start_time()")
            txid, pid, started = cursor.fetchone()
        return False if txid is None else (txid, pid, started)

    def lookup_connection(self):
        raw = self.Database.connect(**self.get_connection_params())
        raw.autocommit = True
        return raw

    def outcome_on(self, raw, facts, marker):
        txid, pid, started = facts
        with raw.cursor() as cursor:
            cursor.execute("SELECT pg_postmaster_start_time(), pg_is_in_recovery()")
            now_started, standby = cursor.fetchone()
            if standby:
                return db_faults.PENDING   # not the primary (yet): its data may lag
            if now_started == started:
                # The same server, never restarted: the id is still this transaction's.
                cursor.execute("SELECT txid_status(%s)", [txid])
                status = cursor.fetchone()[0]
                if status in ("committed", "aborted"):
                    return status == "committed"
                if status == "in progress":
                    # its session has not noticed the lost connection yet: end it
                    cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                   "WHERE pid = %s AND backend_xid::text = %s",
                                   [pid, str(txid % 2 ** 32)])
                    return db_faults.PENDING
            if marker is not None:
                return db_faults.marker_found(cursor, marker)
        return None

    def is_usable(self):
        raw = self.connection
        if raw is None or raw.closed:
            return False
        if raw.info.transaction_status in (extensions.TRANSACTION_STATUS_INERROR,
                                           extensions.TRANSACTION_STATUS_UNKNOWN):
            return False
        # poll, not select: a worker with many client sockets has descriptors past 1024
        waiting = select.poll()
        try:
            waiting.register(raw.fileno(), select.POLLIN)
        except (OSError, ValueError):   # the socket is gone
            return False
        # Anything to read on an idle connection means the server has closed it or is
        # about to (an unasked notice would too, and then costs one reconnection).
        return not waiting.poll(0)
