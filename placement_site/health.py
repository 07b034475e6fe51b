"""Liveness (/healthz) and readiness (/readyz) for load balancers and Kubernetes probes.

Roof: readiness asks the apps (through their selectors, never their models).
ObservabilityMiddleware answers both (settings.PLACEMENT_OPERATOR_ENDPOINTS).

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

from foundation import db_faults
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


def _database_reachable():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return True


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
            checks[name] = "ok" if check() else "failed"
        except (DatabaseError, InterfaceError) as exc:
            # Why, in words safe to show; the database's own (hosts, ports) in the log.
            LOG.warning("readiness check %s failed: %s: %s", name, type(exc).__name__,
                        " ".join(str(exc).split()))
            checks[name] = f"failed: {_REASONS.get(db_faults.kind(exc), _OTHER)}"
        if checks[name] != "ok":
            return _json(503, {"status": "not ready", "checks": checks})
    return _json(200, {"status": "ready", "checks": checks})
