"""Liveness (/healthz) and readiness (/readyz) for load balancers and Kubernetes probes.

Roof: readiness asks the apps (through their selectors, never their models).
ObservabilityMiddleware answers both (settings.PLACEMENT_OPERATOR_ENDPOINTS).

On Galera the database check also asks the node's cluster state (503 unless Synced in
the primary component); read replicas are reported with their lag.

Behind placement-api, nginx answers /healthz itself (serve.py): liveness must not wait
for a thread, and a process whose threads all wait on the database is alive (restarting
it would not help). Both are cheap: liveness touches nothing; readiness runs `SELECT 1`,
asks the migration executor for an empty plan (remembered once true: applied migrations stay
applied while the process lives) and asks providers whether the standard names are
synced (two lookups by unique name, no table scans).
"""
import json
import logging

from django.db import DatabaseError, InterfaceError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpResponse

from foundation import db_faults, db_routing
from providers.selectors.catalogue import standard_names_synced

LOG = logging.getLogger(__name__)
_migrations_applied = False
_REASONS = {
    db_faults.UNAVAILABLE: "the database is unavailable (down, restarting, or no "
                           "connection free)",
    db_faults.TIMED_OUT: "the database did not answer within statement_timeout",
    db_faults.LOCK_TIMEOUT: "a lock was held too long",
}
_OTHER = "the database refused the check"


def _json(status, document):
    response = HttpResponse(json.dumps(document), status=status,
                            content_type="application/json")
    response["Cache-Control"] = "no-store"
    return response


def healthz(request):
    """The process answers."""
    return _json(200, {"status": "ok"})


# A Galera node's state (MariaDB, Percona XtraDB Cluster). SHOW answers on a node outside
# the primary component, where a SELECT is refused; no rows on MySQL without wsrep.
GALERA_STATE = ("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_provider_name', "
                "'wsrep_ready', 'wsrep_local_state', 'wsrep_local_state_comment', "
                "'wsrep_cluster_status')")
GALERA_SYNCED = "4"


def _database_reachable():
    """The database answers; a Galera node also takes writes and reads the cluster's
    latest (Synced, ready, in the primary component). A node that is joining, donating,
    desynced or cut off is not ready, and the reason says its state."""
    with connection.cursor() as cursor:
        if connection.vendor != "mysql":
            cursor.execute("SELECT 1")
            cursor.fetchone()
            return True
        cursor.execute(GALERA_STATE)
        return _galera_verdict(dict(cursor.fetchall()))


def _galera_state_apart():
    """The Galera verdict on a connection of its own, when the service's failed: Django's
    first queries on a connection are SELECTs, which a node outside the primary component
    refuses, and SHOW still answers there. None when this says nothing more."""
    if connection.vendor != "mysql":
        return None
    try:
        raw = connection.Database.connect(**{**connection.get_connection_params(),
                                             "connect_timeout": 2, "read_timeout": 2})
        try:
            with raw.cursor() as cursor:
                cursor.execute(GALERA_STATE)
                verdict = _galera_verdict(dict(cursor.fetchall()))
        finally:
            raw.close()
    except Exception:   # down: the first error says it
        return None
    return None if verdict is True else verdict


def _galera_verdict(state):
    if not state.get("wsrep_provider_name"):
        return True   # not a Galera node (MariaDB reports an empty provider)
    if (state.get("wsrep_local_state") == GALERA_SYNCED and state.get("wsrep_ready") == "ON"
            and state.get("wsrep_cluster_status") == "Primary"):
        return True
    return (f"the Galera node is {state.get('wsrep_local_state_comment', 'unknown')} "
            f"(wsrep_local_state {state.get('wsrep_local_state', '?')}), wsrep_ready "
            f"{state.get('wsrep_ready', '?')}, cluster status "
            f"{state.get('wsrep_cluster_status', '?')}: not Synced in the primary component")


def _migrations_are_applied():
    global _migrations_applied
    if not _migrations_applied:
        executor = MigrationExecutor(connection)
        targets = executor.loader.graph.leaf_nodes()
        _migrations_applied = not executor.migration_plan(targets)
    return _migrations_applied


READINESS_CHECKS = (
    ("database", _database_reachable),
    ("migrations", _migrations_are_applied),
    ("standard_names", standard_names_synced),
)


def readyz(request):
    """200 when every check passes, else 503 naming the ones that failed.

    A check that fails stops the later ones (no migrations -> no tables to look in).
    """
    checks = {}
    for name, check in READINESS_CHECKS:
        try:
            found = check()   # True, False, or why not (a failure)
            checks[name] = ("ok" if found is True else "failed" if not found
                            else f"failed: {found}")
        except (DatabaseError, InterfaceError) as exc:
            # Why, in words safe to show; the database's own (hosts, ports) in the log.
            LOG.warning("readiness check %s failed: %s: %s", name, type(exc).__name__,
                        " ".join(str(exc).split()))
            reason = name == "database" and _galera_state_apart()
            checks[name] = f"failed: {reason or _REASONS.get(db_faults.kind(exc), _OTHER)}"
        if checks[name] != "ok":
            return _json(503, {"status": "not ready", "checks": checks})
    # Read replicas, reported (a lagging or down one does not make the node unready:
    # the primary answers its reads meanwhile).
    for alias in db_routing.replica_aliases():
        usable = db_routing.replica_usable(alias)
        reason = db_routing.replica_status().get(alias, (usable, ""))[1]
        checks[alias] = (f"ok: {reason}" if usable
                         else f"not used, the primary answers its reads: {reason}")
    return _json(200, {"status": "ready", "checks": checks})
