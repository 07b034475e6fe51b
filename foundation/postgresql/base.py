"""Django's PostgreSQL backend, with a health check that sends nothing to the server.

With CONN_HEALTH_CHECKS, Django checks a kept connection before the first query of each
request, so that one the server closed in the meantime (a restart, pgbouncer dropping
idle clients, pg_terminate_backend) is replaced instead of failing the request. Its
check runs `SELECT 1`: a round trip on every request (0.1-0.3 ms, up to a tenth of a
small request). An idle connection has nothing to read unless the server sent something
unasked, and a server closing the connection is such a message (an error, then end of
file), so polling the socket answers the same question without a round trip. As with
`SELECT 1`, a connection whose transaction has failed is not usable.
"""
import select

from django.db.backends.postgresql import base
from psycopg2 import extensions

from foundation.db_faults import CommitGuard
from foundation.db_pool import BoundedConnections


class DatabaseWrapper(CommitGuard, BoundedConnections, base.DatabaseWrapper):
    """Also: no commit past the request's deadline, a commit cut off by a lost connection
    is marked as of unknown outcome (db_faults); served processes hold a bounded number
    of connections and release idle ones (db_pool). A MySQL backend takes the same two
    mixins."""

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
