"""A 3-node MariaDB Galera cluster on this machine (scripts/galera-cluster, ports
19100-19199) with an API server (placement-api: nginx and gunicorn) on each node.

Run in the MariaDB pass of the suite (DATABASE_URL=mysql://...): the cluster is the
tests' own, the suite's database is not used. Skipped, saying why, without Galera
(scripts/bootstrap-galera installs it) or without root (mariadbd runs as mysql)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from django.db import connection

from tests.http import send, wait_for_port
from tests.mariadb_server import root_sql

ROOT = Path(__file__).resolve().parents[2]
BASE_PORT = 19100
NODES = (1, 2, 3)
API_PORT = BASE_PORT + 40   # API server of node N: API_PORT + N


def _why_not():
    if connection.vendor != "mysql":
        return "the MariaDB pass (DATABASE_URL=mysql://...) runs the Galera tests"
    if not Path("/usr/lib/galera/libgalera_smm.so").is_file():
        return "no Galera provider (scripts/bootstrap-galera installs galera-4)"
    if not shutil.which("mariadbd") and not Path("/usr/sbin/mariadbd").exists():
        return "no mariadbd (scripts/bootstrap-galera installs mariadb-server)"
    if os.geteuid() != 0:
        return "the cluster's data directories must be given to the mysql user (root)"
    return None


def pytest_collection_modifyitems(items):
    reason = _why_not()
    if reason:
        for item in items:
            if "tests/galera/" in str(item.fspath):
                item.add_marker(pytest.mark.skip(reason=reason))


class Cluster:
    def __init__(self, directory):
        self.directory = directory
        self.database = f"placement_galera_{uuid.uuid4().hex[:8]}"

    def script(self, *args):
        subprocess.run([str(ROOT / "scripts/galera-cluster"), *args], check=True,
                       capture_output=True, text=True, timeout=300)

    def sql(self, node, statement, params=()):
        return root_sql(statement, params, host="127.0.0.1", port=BASE_PORT + node,
                        database=self.database)

    def pid(self, node):
        return int(Path(self.directory, f"node{node}", "mysqld.pid").read_text())

    def url(self, node):
        return f"mysql+pymysql://root@127.0.0.1:{BASE_PORT + node}/{self.database}?charset=utf8"


class Api:
    """An API server in front of one node."""

    def __init__(self, node, process):
        self.node, self.process = node, process
        self.base = f"http://127.0.0.1:{API_PORT + node}"

    def call(self, method, path, body=None, version="1.39", timeout=60):
        status, _, raw = send(self.base + path, method, body, {
            "X-Auth-Token": "admin", "OpenStack-API-Version": f"placement {version}"},
            timeout=timeout)
        return status, raw

    def readiness(self):
        status, raw = self.call("GET", "/readyz")
        return status, json.loads(raw)


@pytest.fixture(scope="session")
def cluster():
    directory = tempfile.mkdtemp(prefix="placement-galera-", dir="/tmp")
    os.chmod(directory, 0o755)
    galera = Cluster(directory)
    try:
        galera.script("start", directory, str(BASE_PORT))
        root_sql(f"CREATE DATABASE {galera.database}", host="127.0.0.1", port=BASE_PORT + 1)
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                       cwd=ROOT, check=True, timeout=600,
                       env={**os.environ, "DATABASE_URL": galera.url(1)})
        yield galera
    finally:
        subprocess.run([str(ROOT / "scripts/galera-cluster"), "stop", directory],
                       capture_output=True, timeout=300)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def apis(cluster, tmp_path_factory):
    """{node: Api}: an API server (2 workers) on each node."""
    servers = {}
    try:
        for node in NODES:
            data = tmp_path_factory.mktemp(f"api{node}")
            # a frozen node costs a request at most 12 s (above the 10 s lock wait)
            env = {**os.environ, "DATABASE_URL": cluster.url(node),
                   "PLACEMENT_DATA_DIR": str(data), "PLACEMENT_COMPILED_ENGINE": "true",
                   "DATABASE_ROUND_TRIP_TIMEOUT": "12"}
            env.pop("PLACEMENT_CONFIG_FILE", None)
            process = subprocess.Popen(
                [sys.executable, "-m", "placement_site.serve", "--bind",
                 f"127.0.0.1:{API_PORT + node}", "--workers", "2", "--threads", "4",
                 "--log-level", "warning"],
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                stderr=open(data / "server.log", "w"))
            servers[node] = Api(node, process)
            assert wait_for_port(API_PORT + node, process, 90), (data / "server.log").read_text()
        yield servers
    finally:
        for server in servers.values():
            server.process.terminate()
        for server in servers.values():
            try:
                server.process.wait(30)
            except subprocess.TimeoutExpired:
                server.process.kill()


@pytest.fixture
def clean(cluster):
    """Every test starts from no providers and no consumers."""
    for table in ("allocations", "consumers", "inventories", "resource_provider_traits",
                  "resource_provider_aggregates"):
        cluster.sql(1, f"DELETE FROM {table}")
    cluster.sql(1, "UPDATE resource_providers SET parent_id = NULL")
    cluster.sql(1, "DELETE FROM resource_providers")
    return cluster
