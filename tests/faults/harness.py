"""Real servers for the fault suite: a private PostgreSQL 15 (initdb, pg_ctl) and
placement-api (nginx in front of gunicorn, placement_site/serve.py) on ports
19400-19499, claim writers and candidate readers, and the ledger they keep.

The ledger: every answer a client got, and what the client believes of each consumer
afterwards. A definite answer (204, or an error that says nothing was applied) is
believed; an answer that says the outcome is unknown (or a 504) is resolved by reading
the consumer back, as nova does. check() then compares the beliefs with the database:
no claim the client was told failed is saved (phantom), none it was told succeeded is
missing (lost), no provider is over capacity, and every error was a clean JSON answer.
"""
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psycopg2

from tests.http import free_port
from tests.postgresql_server import PostgresServer

ROOT = Path(__file__).resolve().parents[2]
PORTS = range(19400, 19500)
VERSION = "placement 1.28"
CAPACITY = 48   # VCPU of each provider: writers of 1-4 VCPU contend for it
INTERNALS = ("psycopg2", "connection to server", "SELECT ", "Traceback",
             "too many clients", "OperationalError")


def wait_for(check, timeout=60, what="it"):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except (OSError, psycopg2.Error, http.client.HTTPException):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.1)


class Database(PostgresServer):
    """The fault suite's private PostgreSQL (tests/postgresql_server.py), with the
    sessions it counts and the locks it holds."""

    def __init__(self, bindir, workdir):
        super().__init__(bindir, workdir / "data", free_port(PORTS), workdir / "postgres.log")
        self.workdir = workdir

    def start(self, first=False):
        if first:
            self.initdb("max_connections = 30\n")
        super().start()

    def processes(self):
        """The server's processes: the postmaster and its children."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        return [postmaster, *_children(postmaster)]

    def sessions(self, database):
        return self.query("SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
                          "AND pid <> pg_backend_pid()", [database])[0][0]

    def hold_lock(self, database, table, seconds):
        """LOCK `table` (every mode conflicts) for `seconds`, in a thread."""
        def hold():
            conn = self.connect(database)
            try:
                with conn.cursor() as cursor:
                    cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
                    locked.set()
                    time.sleep(seconds)
                conn.rollback()
            finally:
                conn.close()
        locked = threading.Event()
        thread = threading.Thread(target=hold, daemon=True)
        thread.start()
        locked.wait(10)
        return thread


class Server:
    """placement-api on its own port, with its log in a file."""

    def __init__(self, database_url, workdir, workers=2, threads=4, **variables):
        self.port = free_port(PORTS)
        self.log = workdir / f"server-{self.port}.log"
        environ = {k: v for k, v in os.environ.items()
                   if not k.startswith(("PG", "DATABASE_", "PLACEMENT_"))}
        environ.update(DATABASE_URL=database_url, PLACEMENT_DATA_DIR=str(workdir / "placement-data"),
                       PROMETHEUS_MULTIPROC_DIR=str(workdir / f"prometheus-{self.port}"))
        environ.update({k: str(v) for k, v in variables.items()})
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "placement_site.serve", "--bind",
                 f"127.0.0.1:{self.port}", "--workers", str(workers), "--threads",
                 str(threads), "--log-level", "warning"],
                cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: self.call("GET", "/resource_providers")[0] == 200, what="server")

    def call(self, method, path, body=None, timeout=60):
        """(status, headers, document or raw text); status None when no answer came."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            return _exchange(conn, method, path, body)
        finally:
            conn.close()

    def gunicorn_pid(self):
        return next(pid for pid in _children(self.process.pid) if b"gunicorn" in _cmd(pid))

    def worker_pids(self):
        return _children(self.gunicorn_pid())

    def database_connections(self, port):
        """{worker pid: its open TCP connections to `port`} (a process's own view)."""
        remote = {}
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[2].split(":")[1], 16) == port and fields[3] == "01":  # ESTABLISHED
                remote[fields[9]] = True
        counts = {}
        for pid in self.worker_pids():
            try:
                links = [os.readlink(f"/proc/{pid}/fd/{fd}")
                         for fd in os.listdir(f"/proc/{pid}/fd")]
            except OSError:
                continue
            counts[pid] = sum(1 for link in links
                              if link.startswith("socket:[") and link[8:-1] in remote)
        return counts

    def reload(self):
        self.process.send_signal(signal.SIGHUP)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(60)

    def log_text(self):
        return self.log.read_text()


def _exchange(conn, method, path, body):
    headers = {"OpenStack-API-Version": VERSION, "X-Auth-Token": "admin"}
    data = None
    if body is not None:
        data = json.dumps(body)
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, data, headers)
        response = conn.getresponse()
        raw = response.read()
    except (OSError, http.client.HTTPException) as exc:
        return None, {}, f"{type(exc).__name__}: {exc}"
    try:
        document = json.loads(raw) if raw else None
    except ValueError:
        document = raw.decode(errors="replace")
    return response.status, dict(response.getheaders()), document


def _children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _cmd(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def detail(document):
    try:
        return document["errors"][0]["detail"]
    except (TypeError, KeyError, IndexError):
        return ""


def unknown_outcome(status, document):
    return status is None or status == 504 or "may or may not" in detail(document)
