"""/healthz and /readyz: no token, no microversion, cheap."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.test import Client

from foundation import config
from placement_site import health
from providers.models import Trait
from providers.selectors.catalogue import NEWEST_STANDARD_TRAIT


@pytest.fixture
def anonymous():
    return Client()  # no X-Auth-Token, no OpenStack-API-Version


def test_liveness_needs_no_token_and_no_database(anonymous):
    # no django_db mark: any database access would raise
    response = anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_readiness_checks_database_migrations_and_standard_names(anonymous):
    response = anonymous.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {
        "database": "ok", "migrations": "ok", "standard_names": "ok"}}


@pytest.mark.django_db
def test_readiness_runs_a_few_index_lookups_only(anonymous, django_assert_max_num_queries):
    anonymous.get("/readyz")  # the migration plan is remembered once it is empty
    with django_assert_max_num_queries(3):
        assert anonymous.get("/readyz").status_code == 200


@pytest.mark.django_db
def test_not_ready_without_the_standard_names(anonymous):
    Trait.objects.filter(name=NEWEST_STANDARD_TRAIT).delete()
    response = anonymous.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "not ready"
    assert response.json()["checks"]["standard_names"] == "failed"


@pytest.mark.django_db
def test_not_ready_when_a_migration_is_not_applied(anonymous, monkeypatch):
    from django.db.migrations.recorder import MigrationRecorder

    monkeypatch.setattr(health, "_migrations_applied", False)
    last = MigrationRecorder.Migration.objects.filter(app="providers").order_by("-id").first()
    last.delete()
    response = anonymous.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "ok", "migrations": "failed"}


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("database", [
    "postgresql://postgres@127.0.0.1:{closed_port}/placement",  # nothing listens there
    "sqlite:///{tmp_path}/no/such/directory/placement.sqlite3",  # cannot be opened
], ids=["postgresql-server-down", "sqlite-file-unreachable"])
def test_not_ready_when_the_database_is_unreachable(tmp_path, database):
    """A real server whose database cannot be reached: it starts (nothing connects
    before a request), stays alive, and is not ready, naming the failed check."""
    closed_port, port = _free_port(), _free_port()
    environ = {k: v for k, v in os.environ.items() if k not in config.ENVIRONMENT}
    environ.update(DATABASE_URL=database.format(closed_port=closed_port, tmp_path=tmp_path),
                   PLACEMENT_DATA_DIR=str(tmp_path / "data"),
                   PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "prometheus"))
    with open(tmp_path / "server.log", "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "placement_site.wsgi:application",
             "--bind", f"127.0.0.1:{port}", "--workers", "1", "--log-level", "warning"],
            cwd=ROOT, env=environ, stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    status, _ = _get(port, "/healthz")
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"server did not start: "
                                    f"{(tmp_path / 'server.log').read_text()}")
                    time.sleep(0.2)
            assert status == 200
            status, body = _get(port, "/readyz")
            # the API: Placement's 503 with Retry-After, the database's words in the log
            request = urllib.request.Request(f"http://127.0.0.1:{port}/resource_providers",
                                             headers={"X-Auth-Token": "admin"})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=30)
            answer = refused.value.read().decode()
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert status == 503, body
    assert body["status"] == "not ready"
    assert list(body["checks"]) == ["database"]  # the later checks did not run
    assert body["checks"]["database"].startswith("failed: the database is unavailable")
    assert "127.0.0.1" not in json.dumps(body) and "placement.sqlite3" not in json.dumps(body)
    assert refused.value.code == 503 and refused.value.headers["Retry-After"] == "5"
    error = json.loads(answer)["errors"][0]
    assert error["status"] == 503 and "The database is unavailable" in error["detail"]
    assert str(closed_port) not in answer and "sqlite3" not in answer
    assert "OperationalError" in (tmp_path / "server.log").read_text()


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
