"""Real servers for the scale-out tests: a PostgreSQL 15 primary with a streaming hot
standby (initdb, pg_basebackup -R, pg_ctl), pgbouncer in transaction-pooling mode in
front of both, and gunicorn masters started as separate API nodes.

They run once, in the suite's PostgreSQL pass (they start their own servers, whatever
DATABASE_URL says, so a second run on SQLite would prove nothing more), and skip with
the reason when the binaries cannot be had (.ci/run installs them). Ports: 18800-18899.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psycopg2
import pytest
from django.db import connection

from foundation import config
from tests.http import free_port
from tests.postgresql_server import (
    PostgresServer,
    as_postgres,
    server_binaries,
    work_directory,
)

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
PORTS = range(18800, 18900)
DATABASE = "placement"


def take_port(taken):
    """A free port of PORTS, marked taken."""
    port = free_port(PORTS, taken)
    taken.add(port)
    return port


class Cluster:
    """Primary, standby (tests/postgresql_server.py) and pgbouncer."""

    def __init__(self, bindir, workdir):
        self.bindir, self.workdir = bindir, workdir
        self.taken = set()
        self.servers = {name: PostgresServer(bindir, workdir / name, take_port(self.taken),
                                             workdir / f"{name}.log")
                        for name in ("primary", "standby")}
        self.primary_port = self.servers["primary"].port
        self.standby_port = self.servers["standby"].port
        self.bouncer_port = take_port(self.taken)
        self.bouncer = None

    def pg_ctl(self, name, action, *extra):
        self.servers[name].pg_ctl(action, *extra)

    def start(self):
        primary, standby = self.servers["primary"], self.servers["standby"]
        primary.initdb("synchronous_commit = off\nmax_connections = 200\n"
                       "wal_level = replica\nhot_standby = on\n")
        primary.start()
        primary.query(f"CREATE DATABASE {DATABASE}")
        primary.run(self.bindir / "pg_basebackup", "-h", "127.0.0.1", "-p", primary.port,
                    "-U", "postgres", "-D", standby.data, "-R", "-X", "stream", "-c", "fast")
        with open(standby.data / "postgresql.auto.conf", "a") as conf:
            conf.write(f"port = {standby.port}\n")
        standby.start()

    def start_bouncer(self):
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        ini = self.workdir / "pgbouncer.ini"
        (self.workdir / "userlist.txt").write_text('"postgres" ""\n')
        ini.write_text(f"""[databases]
{DATABASE} = host=127.0.0.1 port={self.primary_port} dbname={DATABASE}
{DATABASE}_ro = host=127.0.0.1 port={self.standby_port} dbname={DATABASE}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.bouncer_port}
unix_socket_dir =
auth_type = trust
admin_users = postgres
auth_file = {self.workdir}/userlist.txt
pool_mode = transaction
default_pool_size = 20
max_client_conn = 200
ignore_startup_parameters = extra_float_digits,options
; a stopped server: connected clients get an error after 5 s, not 120
; (docs/operators/scaling-out.md#connection-pooling-pgbouncer)
query_wait_timeout = 5
server_login_retry = 1
logfile = {self.workdir}/pgbouncer.log
""")
        self.bouncer = subprocess.Popen(as_postgres(binary, ini), cwd="/",
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: socket.create_connection(("127.0.0.1", self.bouncer_port)).close())

    def bouncer_transactions(self):
        """pgbouncer's count of transactions per database (its admin console)."""
        conn = psycopg2.connect(host="127.0.0.1", port=self.bouncer_port, user="postgres",
                                dbname="pgbouncer")
        try:
            conn.autocommit = True
            with conn.cursor() as cursor:
                cursor.execute("SHOW STATS")
                names = [column.name for column in cursor.description]
                return {row[0]: dict(zip(names, row))["total_xact_count"]
                        for row in cursor.fetchall()}
        finally:
            conn.close()

    def stop(self):
        if self.bouncer is not None:
            self.bouncer.terminate()
            self.bouncer.wait(10)
        for name in ("standby", "primary"):
            self.servers[name].stop_quietly()

    def url(self, name, via_bouncer=False):
        if via_bouncer:
            database = DATABASE if name == "primary" else f"{DATABASE}_ro"
            return f"postgresql://postgres@127.0.0.1:{self.bouncer_port}/{database}"
        return self.servers[name].url(DATABASE)

    def query(self, name, sql, params=(), database=DATABASE):
        return self.servers[name].query(sql, params, database)

    def wait_replayed(self):
        """Until the standby has replayed everything the primary has written. (The
        cluster commits asynchronously: a commit's WAL may still sit in the primary's
        buffers, past pg_current_wal_lsn(); the insert position includes it.)"""
        target = self.query("primary", "SELECT pg_current_wal_insert_lsn()::text")[0][0]
        wait_for(lambda: self.query(
            "standby", "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [target])[0][0])


def wait_for(check, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check() is not False:
                return
        except (OSError, psycopg2.Error):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {check}")
        time.sleep(0.1)


@pytest.fixture(scope="session")
def cluster():
    if connection.vendor != "postgresql":
        pytest.skip("real-server scaling tests run once, in the PostgreSQL pass of the suite")
    bindir = server_binaries("pg_basebackup")
    workdir = work_directory("placement-scale-")
    cluster = Cluster(bindir, workdir)
    try:
        cluster.start()
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                       env=server_environ(cluster.url("primary"), workdir), check=True)
        cluster.wait_replayed()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def bouncer(cluster):
    if not (shutil.which("pgbouncer") or os.path.exists("/usr/sbin/pgbouncer")):
        pytest.skip("pgbouncer not installed (Debian package pgbouncer)")
    cluster.start_bouncer()
    return cluster


def server_environ(database_url, workdir, **variables):
    environ = {k: v for k, v in os.environ.items()
               if k not in config.ENVIRONMENT and not k.startswith("PG")}
    environ.update({"DATABASE_URL": database_url, "PLACEMENT_DATA_DIR": str(workdir / "data"),
                    "DJANGO_SETTINGS_MODULE": "placement_site.settings"})
    environ.update({k: str(v) for k, v in variables.items()})
    return environ


class Node:
    """One API node: a gunicorn master with its workers; the log is kept in a file."""

    def __init__(self, cluster, name, workers=1, **variables):
        self.port = take_port(cluster.taken)
        self.log = cluster.workdir / f"{name}.log"
        environ = server_environ(variables.pop("DATABASE_URL", cluster.url("primary")),
                                 cluster.workdir, **variables)
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [str(GUNICORN), "placement_site.wsgi:application", "--bind",
                 f"127.0.0.1:{self.port}", "--workers", str(workers), "--log-level", "warning"],
                cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: self.call("GET", "/")[0] == 200)

    def call(self, method, path, body=None, version="latest"):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        request.add_header("OpenStack-API-Version", f"placement {version}")
        request.add_header("X-Auth-Token", "admin")
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, data, timeout=60) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            raw = error.read()
            return error.code, json.loads(raw) if raw else None

    def log_text(self):
        return self.log.read_text()

    def stop(self):
        self.process.terminate()
        self.process.wait(30)
