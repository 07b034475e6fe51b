"""slave_connection with a real MariaDB replica (foundation/db_routing.py): a private
primary and its replica (tests/mariadb_server.py: binary log, GTID, ports 3341-3349)
and API servers (gunicorn) whose `connection` is the primary and `slave_connection`
the replica.

What the routing promises, tested here through HTTP: the GET requests of the replica
routes (resource_providers, allocation_candidates) read the replica while its SQL
thread runs and it lags less than replica_max_lag; every other route, and every write,
reads the primary, so a client reads its own writes by uuid however far behind the
replica is; a stale candidate cannot over-allocate (the claim is checked on the
primary); a replica whose replication stopped, or whose server was killed, is skipped
(logged once, counted in placement_replica_fallbacks_total) and the primary answers,
never a 500. Readiness (/readyz) is the primary's: it stays 200 without the replica.

Run in the MariaDB pass of the suite (DATABASE_URL=mysql://...); the suite's database
is not used. Skipped, saying why, elsewhere, without mariadbd, or without root.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from pathlib import Path

import pytest
from django.db import connection

from foundation import config
from tests import mariadb_server
from tests.http import free_port, send, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
PORTS = range(3341, 3350)
DATABASE = "placement"
LONG = 3600   # a lag bound never reached: that server reads the replica, however stale
SHORT = 1     # past it, the primary answers


def _why_not():
    if connection.vendor != "mysql":
        return "the MariaDB pass (DATABASE_URL=mysql://...) runs the MySQL replica tests"
    return mariadb_server.why_not()


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


@pytest.fixture(scope="module")
def pair():
    directory = Path(tempfile.mkdtemp(prefix="placement-replica-"))
    os.chmod(directory, 0o755)   # the mysql user walks through it
    primary_port = free_port(PORTS)
    pair = mariadb_server.ReplicaPair(directory, primary_port,
                                      free_port(PORTS, taken={primary_port}))
    try:
        pair.start()
        pair.primary.sql(f"CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4")
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                       cwd=ROOT, check=True, timeout=300,
                       env=_environ(pair.primary.url(DATABASE), directory))
        pair.wait_replicated()
        yield pair
    finally:
        pair.stop()
        shutil.rmtree(directory, ignore_errors=True)


def _environ(database_url, directory, **variables):
    environ = {k: v for k, v in os.environ.items() if k not in config.ENVIRONMENT}
    environ.update(DATABASE_URL=database_url, PLACEMENT_DATA_DIR=str(directory / "data"),
                   **{k: str(v) for k, v in variables.items()})
    return environ


class Api:
    """gunicorn (one worker: one health cache, one log) on the pair."""

    def __init__(self, pair, name, max_lag):
        self.port = free_port(range(18420, 18440))
        self.log = pair.directory / f"{name}.log"
        environ = _environ(pair.primary.url(DATABASE), pair.directory,
                           DATABASE_REPLICA_URLS=pair.replica.url(DATABASE),
                           DATABASE_REPLICA_MAX_LAG=max_lag)
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [str(GUNICORN), "placement_site.wsgi:application", "--bind",
                 f"127.0.0.1:{self.port}", "--workers", "1", "--log-level", "warning"],
                cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT)
        assert wait_for_port(self.port, self.process, 60), self.log_text()

    def call(self, method, path, body=None):
        status, _, raw = send(f"http://127.0.0.1:{self.port}{path}", method, body, {
            "X-Auth-Token": "admin", "OpenStack-API-Version": "placement latest"})
        assert status < 500, (method, path, status, raw, self.log_text()[-3000:])
        return status, raw

    def json(self, path):
        status, raw = self.call("GET", path)
        assert status == 200, (path, status, raw)
        return json.loads(raw)

    def log_text(self):
        return self.log.read_text()

    def stop(self):
        self.process.terminate()
        self.process.wait(30)


@pytest.fixture(scope="module")
def relaxed(pair):
    api = Api(pair, "relaxed", LONG)
    yield api
    api.stop()


@pytest.fixture(scope="module")
def strict(pair):
    api = Api(pair, "strict", SHORT)
    yield api
    api.stop()


def make_provider(api, name, vcpu=8):
    uuid = str(uuidlib.uuid4())
    status, raw = api.call("POST", "/resource_providers", {"name": name, "uuid": uuid})
    assert status == 200, raw
    status, raw = api.call("PUT", f"/resource_providers/{uuid}/inventories", {
        "resource_provider_generation": 0, "inventories": {"VCPU": {"total": vcpu}}})
    assert status == 200, raw
    return uuid


def claim(api, provider, vcpu=1):
    return api.call("PUT", f"/allocations/{uuidlib.uuid4()}", {
        "allocations": {provider: {"resources": {"VCPU": vcpu}}}, "project_id": "p",
        "user_id": "u", "consumer_generation": None, "consumer_type": "INSTANCE"})[0]


def listed(api):
    providers = api.json("/resource_providers")["resource_providers"]
    return {rp["uuid"]: rp["name"] for rp in providers}


def candidates(api):
    return set(api.json("/allocation_candidates?resources=VCPU:1")["provider_summaries"])


def settle(pair, *apis):
    """The replica has everything and each server's health cache has seen it so."""
    pair.wait_replicated()
    time.sleep(1.1)   # db_routing.HEALTH_TTL
    for api in apis:
        listed(api)


def fallbacks(api):
    _, raw = api.call("GET", "/metrics")
    found = re.search(rb"^placement_replica_fallbacks_total ([0-9.]+)", raw, re.M)
    return float(found.group(1)) if found else 0.0


def delayed(pair, seconds):
    """Replication kept running but applying only what is `seconds` old (MASTER_DELAY):
    a replica that is up and lagging."""
    pair.replica.sql("STOP SLAVE")
    pair.replica.sql("CHANGE MASTER TO MASTER_DELAY = %s", [seconds])
    pair.replica.sql("START SLAVE")


def test_the_replica_routes_read_the_replica_and_the_other_routes_the_primary(pair, relaxed):
    provider = make_provider(relaxed, "replicated")
    settle(pair, relaxed)
    assert listed(relaxed)[provider] == "replicated"
    assert provider in candidates(relaxed)
    # A name only the replica has (written there alone: it keeps no binary log) tells
    # which server answered.
    pair.replica.sql("UPDATE resource_providers SET name = 'on the replica' WHERE uuid = %s",
                     [provider], database=DATABASE)
    try:
        assert listed(relaxed)[provider] == "on the replica"
        assert relaxed.json(f"/resource_providers/{provider}")["name"] == "replicated"
    finally:
        pair.replica.sql("UPDATE resource_providers SET name = 'replicated' WHERE uuid = %s",
                         [provider], database=DATABASE)


def test_a_lagging_replica_serves_its_routes_while_writes_and_their_reads_use_the_primary(
        pair, relaxed, strict):
    old = make_provider(relaxed, "before the lag", vcpu=1)
    settle(pair, relaxed, strict)
    delayed(pair, LONG)
    try:
        new = make_provider(relaxed, "during the lag")   # reads its generation on the primary
        assert claim(relaxed, new) == 204
        # read-your-writes where the client names what it wrote
        assert relaxed.json(f"/resource_providers/{new}")["generation"] == 2
        assert relaxed.json(f"/resource_providers/{new}/usages")["usages"] == {"VCPU": 1}
        # the replica routes: the lagging replica, which has not seen `new`
        assert old in listed(relaxed) and new not in listed(relaxed)
        # A stale candidate is refused where the claim is checked, on the primary:
        # `old` (1 VCPU) is taken, the replica still offers it, a second claim fails.
        assert claim(relaxed, old) == 204
        assert old in candidates(relaxed)
        assert claim(relaxed, old) == 409
        assert relaxed.json(f"/resource_providers/{old}/usages")["usages"] == {"VCPU": 1}
        # Past its bound (1 s), the strict server reads its replica routes on the primary.
        time.sleep(SHORT + 1.2)
        before = fallbacks(strict)
        assert new in listed(strict) and old not in candidates(strict)
        assert fallbacks(strict) >= before + 2
        assert "replica replica1 skipped, the primary answers its reads: lags" in \
            strict.log_text()
    finally:
        delayed(pair, 0)
    settle(pair, relaxed)
    assert new in listed(relaxed)


def test_a_replica_whose_replication_stopped_is_skipped(pair, relaxed):
    settle(pair, relaxed)
    pair.replica.sql("STOP SLAVE")
    try:
        time.sleep(1.1)
        provider = make_provider(relaxed, "while replication stopped")
        assert provider in listed(relaxed)   # from the primary
        assert provider in candidates(relaxed)
        assert "replica replica1 skipped, the primary answers its reads: lags unknown" in \
            relaxed.log_text()
        assert relaxed.call("GET", "/readyz")[0] == 200
    finally:
        pair.replica.sql("START SLAVE")
    settle(pair, relaxed)
    assert "replica replica1 is used for reads again" in relaxed.log_text()


def test_a_killed_replica_is_skipped_without_client_errors(pair, relaxed):
    provider = make_provider(relaxed, "before the kill")
    settle(pair, relaxed)
    pair.replica.kill()
    # The first read still believes the replica up (health is cached for a second): it
    # fails there and is answered again from the primary. Api.call asserts no 5xx.
    for _ in range(3):
        assert provider in listed(relaxed)
        assert provider in candidates(relaxed)
    another = make_provider(relaxed, "while the replica is down")
    assert another in listed(relaxed)
    assert relaxed.call("GET", "/readyz")[0] == 200
    assert "replica replica1 skipped, the primary answers its reads: down" in \
        relaxed.log_text()
