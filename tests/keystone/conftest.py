"""A real Keystone (the `keystone` package from PyPI, in .venv-keystone: SQLite, Fernet
tokens, bootstrapped admin) and real Placement servers (gunicorn, keystone mode) in
front of it; memcached from Debian's package for the shared token cache.

scripts/bootstrap-keystone installs both; without them these tests skip and say so. They
run once, in the suite's SQLite pass: Placement's database plays no part in what they
show. Ports: free ones picked at start.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from django.db import connection

from foundation import config
from tests.http import send, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
KEYSTONE_VENV = ROOT / ".venv-keystone"
GUNICORN = Path(sys.executable).with_name("gunicorn")
PASSWORD = "secret-for-tests"
PROJECT = "demo"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port, process, log, seconds=90):
    if not wait_for_port(port, process, seconds):
        raise RuntimeError(f"server on {port} did not start: {log.read_text()[-3000:]}")


def call(url, method="GET", body=None, headers=None):
    """(status, headers, parsed JSON or text) of one HTTP request."""
    status, answer_headers, raw = send(url, method, body, headers)
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode()
    return status, answer_headers, parsed


# The WSGI server Keystone runs under: the standard library's, one request at a time
# (SQLite). Keystone reads sys.argv as its command line: it gets none.
KEYSTONE_SERVER = """
import sys
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
port = int(sys.argv[1])
sys.argv = sys.argv[:1]
from keystone.wsgi.api import application
class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass
WSGIServer.allow_reuse_address = True
make_server("127.0.0.1", port, application, handler_class=Quiet).serve_forever()
"""


class Keystone:
    """Keystone on a fixed free port; stop() and start() again to be down and back."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v3"
        self.process = None
        self.conf = workdir / "keystone.conf"
        self.conf.write_text(f"""
[DEFAULT]
log_file = {workdir}/keystone.log
[database]
connection = sqlite:///{workdir}/keystone.db
[fernet_tokens]
key_repository = {workdir}/fernet-keys
[fernet_receipts]
key_repository = {workdir}/fernet-keys
[credential]
key_repository = {workdir}/credential-keys
[identity]
# the fewest bcrypt rounds: tokens are issued in milliseconds
password_hash_rounds = 4
""")

    def manage(self, *args):
        subprocess.run([str(KEYSTONE_VENV / "bin" / "keystone-manage"), "--config-file",
                        str(self.conf), *args], check=True, capture_output=True,
                       cwd=self.workdir)

    def set_up(self):
        self.manage("db_sync")
        self.manage("fernet_setup", "--keystone-user", "root", "--keystone-group", "root")
        self.manage("credential_setup", "--keystone-user", "root",
                    "--keystone-group", "root")
        self.manage("bootstrap", "--bootstrap-password", PASSWORD,
                    "--bootstrap-region-id", "RegionOne",
                    "--bootstrap-public-url", self.url,
                    "--bootstrap-internal-url", self.url)

    def start(self):
        log = self.workdir / "server.log"
        self.process = subprocess.Popen(
            [str(KEYSTONE_VENV / "bin" / "python"), "-W", "ignore", "-c", KEYSTONE_SERVER,
             str(self.port)], cwd=self.workdir, stdout=subprocess.DEVNULL,
            stderr=open(log, "a"), env={**os.environ, "OS_KEYSTONE_CONFIG_FILES": str(self.conf)})
        wait_for(self.port, self.process, log)
        # listening is not answering yet: the application loads first
        deadline = time.monotonic() + 60
        while call(self.url)[0] != 200:
            if time.monotonic() > deadline:
                raise RuntimeError("keystone does not answer")
            time.sleep(0.2)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)

    # --- the identity API, as an administrator -------------------------------------

    def token(self, user, scope):
        """A token id for user (password PASSWORD), scope: ("project", name),
        ("domain", id) or ("system", None)."""
        kind, name = scope
        scope_body = {"project": {"project": {"name": name, "domain": {"id": "default"}}},
                      "domain": {"domain": {"id": name}},
                      "system": {"system": {"all": True}}}[kind]
        status, headers, body = call(f"{self.url}/auth/tokens", "POST", {"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": user, "domain": {"id": "default"}, "password": PASSWORD}}},
            "scope": scope_body}})
        assert status == 201, body
        return headers["X-Subject-Token"]

    def admin(self, method, path, body=None):
        status, _, answer = call(f"{self.url}{path}", method, body,
                                 {"X-Auth-Token": self.admin_token})
        assert status < 300, (method, path, status, answer)
        return answer

    def role_id(self, name):
        found = self.admin("GET", f"/roles?name={name}")["roles"]
        if found:
            return found[0]["id"]
        return self.admin("POST", "/roles", {"role": {"name": name}})["role"]["id"]

    def populate(self):
        """Projects demo and service; users with the roles of each persona (Keystone
        adds the implied ones to their tokens: admin -> member -> reader)."""
        self.admin_token = self.token("admin", ("project", "admin"))
        self.project_ids = {}
        for project in (PROJECT, "service"):
            self.project_ids[project] = self.admin("POST", "/projects", {"project": {
                "name": project, "domain_id": "default"}})["project"]["id"]
        users = {"placement": ("service", "service"), "nova": (PROJECT, "service"),
                 "alice": (PROJECT, "admin"), "rita": (PROJECT, "reader"),
                 "mike": (PROJECT, "member")}
        for user, (project, role) in users.items():
            user_id = self.admin("POST", "/users", {"user": {
                "name": user, "domain_id": "default", "password": PASSWORD}})["user"]["id"]
            self.admin("PUT", f"/projects/{self.project_ids[project]}/users/{user_id}"
                              f"/roles/{self.role_id(role)}")
            if user == "alice":  # also an administrator of the default domain
                self.admin("PUT", f"/domains/default/users/{user_id}"
                                  f"/roles/{self.role_id('admin')}")


class Placement:
    """gunicorn serving placement_site in keystone mode, as an operator starts it."""

    def __init__(self, workdir, keystone, database_url, extra_conf="", memcached_servers=""):
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.conf = workdir / "placement.conf"
        self.conf.write_text(f"""
[api]
auth_strategy = keystone
[placement_database]
connection = {database_url}
[django]
data_dir = {workdir}/data
[keystone_authtoken]
www_authenticate_uri = {keystone.url}
auth_url = {keystone.url}
auth_type = password
username = placement
password = {PASSWORD}
project_name = service
user_domain_name = Default
project_domain_name = Default
http_connect_timeout = 5
http_request_max_retries = 0
memcached_servers = {memcached_servers}
{extra_conf}
""")
        self.process = None

    def environ(self):
        environ = {k: v for k, v in os.environ.items() if k not in config.ENVIRONMENT}
        environ["PLACEMENT_CONFIG_FILE"] = str(self.conf)
        environ["PROMETHEUS_MULTIPROC_DIR"] = str(self.workdir / "prometheus")
        return environ

    def start(self):
        log = self.workdir / "server.log"
        self.process = subprocess.Popen(
            [str(GUNICORN), "placement_site.wsgi:application",
             "--config", "python:placement_site.gunicorn_conf",
             "--bind", f"127.0.0.1:{self.port}", "--workers", "2",
             "--log-level", "warning"],
            cwd=ROOT, env=self.environ(), stdout=subprocess.DEVNULL, stderr=open(log, "a"))
        wait_for(self.port, self.process, log)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def request(self, method, path, token=None, body=None, headers=None):
        headers = {"OpenStack-API-Version": "placement latest",
                   "Accept": "application/json", **(headers or {})}
        if token:
            headers["X-Auth-Token"] = token
        return call(f"{self.url}{path}", method, body, headers)


@pytest.fixture(scope="session")
def keystone():
    if connection.vendor != "sqlite":
        pytest.skip("tests/keystone run in the SQLite pass only")
    if not (KEYSTONE_VENV / "bin" / "keystone-manage").exists():
        pytest.skip("keystone is not installed in .venv-keystone (scripts/bootstrap-keystone)")
    workdir = Path(tempfile.mkdtemp(prefix="placement-keystone-"))
    server = Keystone(workdir)
    try:
        server.set_up()
        server.start()
        server.populate()
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def placement_database(keystone, tmp_path_factory):
    """One migrated SQLite database the Placement servers share (one at a time)."""
    workdir = tmp_path_factory.mktemp("placement-db")
    url = f"sqlite:///{workdir}/placement.sqlite3"
    environ = {k: v for k, v in os.environ.items() if k not in config.ENVIRONMENT}
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env={**environ, "DATABASE_URL": url, "PLACEMENT_DATA_DIR": str(workdir)},
                   check=True)
    return url


@pytest.fixture
def make_placement(keystone, placement_database, tmp_path):
    """make_placement(extra_conf, memcached_servers=) -> a started Placement server; stopped afterwards."""
    servers = []

    def make(extra_conf="", name="placement", memcached_servers=""):
        workdir = tmp_path / f"{name}{len(servers)}"
        workdir.mkdir()
        server = Placement(workdir, keystone, placement_database, extra_conf,
                           memcached_servers)
        servers.append(server)
        server.start()
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def memcached():
    binary = shutil.which("memcached")
    if binary is None:
        pytest.skip("memcached is not installed (scripts/bootstrap-keystone)")
    port = free_port()
    user = ["-u", "root"] if os.geteuid() == 0 else []
    process = subprocess.Popen([binary, "-l", "127.0.0.1", "-p", str(port), "-U", "0",
                                *user], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_for_port(port, process, 30):
            raise RuntimeError("memcached did not start")
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
