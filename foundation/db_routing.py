"""Read replicas: which database answers a read.

The primary ("default") answers everything, except the GET requests of the route
templates in PLACEMENT_REPLICA_READ_ROUTES ([placement_database] replica_read_routes),
which read from a streaming hot standby ("replica1", ...) when one is up and lags less
than PLACEMENT_REPLICA_MAX_LAG seconds. Those reads tolerate a little staleness: a
stale allocation candidate is claimed with a generation check on the primary, which
refuses it, and the client asks again.

Even on such a request, a write (db_for_write) and every later read of the request,
and every read inside transaction.atomic(), go to the primary. Replica health (up, in
recovery, lag) is asked of the replica itself at most once a second per process and
per replica, never once per request. A replica that fails mid-request is marked down
and the (read-only) request is answered again from the primary.
"""
import contextvars
import logging
import random
import threading
import time

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, Error, connections
from django.urls import URLResolver, get_resolver
from django.urls.exceptions import Resolver404

from foundation.ops import metrics

LOG = logging.getLogger("placement.db_routing")
HEALTH_TTL = 1.0  # seconds a replica's health is trusted before it is asked again

# A replica whose WAL receiver has replayed all it received is current (an idle
# primary writes nothing, so the last replayed commit can be old without any lag);
# otherwise the lag is the age of the last replayed commit.
HEALTH_SQL = """
SELECT pg_is_in_recovery(),
       pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
           AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver),
       EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())
"""


class _RequestReads:
    """Where the current request's reads go: a replica alias, or None (primary)."""

    __slots__ = ("alias",)

    def __init__(self, alias):
        self.alias = alias


_request_reads = contextvars.ContextVar("placement_request_reads", default=None)


def read_alias():
    """The database alias the next read of this request should use."""
    reads = _request_reads.get()
    if reads is None or reads.alias is None or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    return reads.alias


def replica_aliases():
    return [alias for alias in connections if alias != DEFAULT_DB_ALIAS]


class ReplicaRouter:
    """Django database router; always names a database, so that an instance read on a
    replica is still saved on the primary (Django would otherwise follow the instance)."""

    def db_for_read(self, model, **hints):
        return read_alias()

    def db_for_write(self, model, **hints):
        reads = _request_reads.get()
        if reads is not None:
            reads.alias = None  # a request that writes reads its own writes
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True  # replicas hold the primary's rows

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == DEFAULT_DB_ALIAS


# --- replica health ------------------------------------------------------------------


_health_lock = threading.Lock()
_health = {}  # alias -> (monotonic time of the check, usable, reason)


def replica_usable(alias, force=False):
    """Is `alias` up, a standby and within the lag bound? Asked at most once a second;
    while one thread asks, the others keep the previous answer (at first: unusable)."""
    now = time.monotonic()
    with _health_lock:
        known = _health.get(alias)
        if known is not None and not force and now - known[0] < HEALTH_TTL:
            return known[1]
        _health[alias] = (now, known[1] if known else False, known[2] if known else "")
    usable, reason = _probe(alias)
    with _health_lock:
        _health[alias] = (time.monotonic(), usable, reason)
    # One line per change of state (up, down, lagging), not one per check.
    if known is None or known[1] != usable or (
            not usable and known[2].split(" ")[0] != reason.split(" ")[0]):
        if usable:
            LOG.info("replica %s is used for reads%s", alias, "" if known is None else " again")
        else:
            LOG.warning("replica %s skipped, the primary answers its reads: %s",
                        alias, reason)
    return usable


def replica_status():
    """{alias: (usable, reason)} as last found (for reports and metrics)."""
    with _health_lock:
        return {alias: (usable, reason) for alias, (_, usable, reason) in _health.items()}


def _mysql_health(cursor):
    """(a replica?, caught up?, lag in seconds or None) of a MySQL/MariaDB replica, from
    SHOW REPLICA STATUS (MariaDB 10.5+ names its columns Slave_*/..._Master, MySQL
    8.0.22+ Replica_*/..._Source). A replica whose SQL thread stopped is not current."""
    cursor.execute("SHOW REPLICA STATUS")
    row = cursor.fetchone()
    if row is None:
        return False, False, None
    status = dict(zip((column[0] for column in cursor.description), row))
    running = status.get("Slave_SQL_Running", status.get("Replica_SQL_Running"))
    lag = status.get("Seconds_Behind_Master", status.get("Seconds_Behind_Source"))
    if running != "Yes":
        return True, False, None
    return True, lag == 0, lag


def _probe(alias):
    connection = connections[alias]
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "mysql":
                standby, caught_up, lag = _mysql_health(cursor)
            else:
                cursor.execute(HEALTH_SQL)
                standby, caught_up, lag = cursor.fetchone()
    except Error as exc:
        # Error, not DatabaseError: a connection the server (or pgbouncer) closed under
        # us raises InterfaceError. Closed here, the next probe connects anew.
        connection.close()
        return False, "down (" + " ".join(str(exc).split())[:200] + ")"
    if not standby:
        return False, "not a standby (promoted?)" if connection.vendor != "mysql" else (
            "not a replica (SHOW REPLICA STATUS is empty)")
    if caught_up:
        return True, "caught up"
    bound = settings.PLACEMENT_REPLICA_MAX_LAG
    if lag is None or lag > bound:
        lag_text = "unknown" if lag is None else f"{float(lag):.1f} s"
        return False, f"lags {lag_text}, more than {bound:g} s"
    return True, f"lags {float(lag):.1f} s"


def choose_replica():
    """A usable replica alias at random, or None: the primary answers."""
    usable = [alias for alias in replica_aliases() if replica_usable(alias)]
    if not usable:
        primary_fallback()
        return None
    return random.choice(usable)


def primary_fallback():
    """A replica-routed read goes to the primary instead (replicas down or lagging);
    the reason was logged by replica_usable when the replica's state changed."""
    metrics.REPLICA_FALLBACKS.inc()


# --- which requests may read from a replica --------------------------------------------


def route_templates(patterns=None, prefix=""):
    """Every route template of the URLconf, includes flattened ("resource_providers")."""
    patterns = get_resolver().url_patterns if patterns is None else patterns
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from route_templates(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def replica_routes():
    return {route.strip("/") for route in settings.PLACEMENT_REPLICA_READ_ROUTES}


def unknown_replica_routes():
    """Configured replica routes that are not in the route table (a typo)."""
    return sorted(replica_routes() - set(route_templates()))


class ReplicaReadMiddleware:
    """Marks the GET requests of the replica routes as readable from a replica."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not (request.method == "GET" and replica_aliases() and self._replica_route(request)):
            return self.get_response(request)
        alias = choose_replica()
        if alias is None:
            return self.get_response(request)
        token = _request_reads.set(_RequestReads(alias))
        try:
            response = self.get_response(request)
        finally:
            _request_reads.reset(token)
        if response.status_code >= 500 and not replica_usable(alias, force=True):
            # The replica went away mid-request: a read-only request is answered again.
            primary_fallback()
            response = self.get_response(request)
        return response

    @staticmethod
    def _replica_route(request):
        try:
            match = get_resolver().resolve(request.path_info)
        except Resolver404:
            return False
        return match.route.strip("/") in replica_routes()


def check_at_start():
    """Stop the start with one line when a configured replica route is not a route,
    or the MySQL server is unfit (foundation/mysql/checks.py)."""
    from foundation import config
    from foundation.mysql import checks as mysql_checks

    mysql_checks.check_at_start(connections[DEFAULT_DB_ALIAS])
    unknown = unknown_replica_routes()
    if unknown:
        config.stop(config.ConfigError(
            f"[placement_database] replica_read_routes: not a route template: "
            f"{', '.join(unknown)} (e.g. allocation_candidates, resource_providers)"))
