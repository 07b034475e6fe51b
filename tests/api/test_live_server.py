"""A real gunicorn started the way an operator starts it: placement.conf options and a
YAML policy file take effect, a bad option stops the start with one line.

The server's database is the one the suite runs on: its own SQLite file, or, in the
PostgreSQL pass, a throw-away PostgreSQL database on the suite's server, created and
dropped by the `live` fixture. Either is named by `[placement_database] connection` of
the written placement.conf; DATABASE_URL and the other variables are removed so that
the file decides.
"""
import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote, urlparse

import psycopg2
import pymysql
import pytest
from django.conf import settings
from django.db import connection

from foundation import config
from foundation.api.policy import ENDPOINT_RULES
from tests.http import send, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
# this project's test port range; a port per database, as CI runs two passes at once
PORT = 18411 + {"sqlite": 0, "postgresql": 50, "mysql": 100}[connection.vendor]


def server_environ(conf_path):
    """The server's environment: conf_path (a placement.conf) found as Placement's WSGI
    module finds it, through OS_PLACEMENT_CONFIG_DIR."""
    environ = {k: v for k, v in os.environ.items() if k not in config.ENVIRONMENT}
    environ[config.CONFIG_DIR_VARIABLE] = str(conf_path.parent)
    return environ


def start(conf_path, port=PORT, log=subprocess.PIPE):
    """gunicorn on conf_path; its stderr (the log) goes to `log`, an open file or a pipe."""
    return subprocess.Popen(
        [str(GUNICORN), "placement_site.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--log-level", "warning"],
        cwd=ROOT, env=server_environ(conf_path), stdout=subprocess.DEVNULL,
        stderr=log, text=True)


def call(method, path, token="user", body=None, headers=None):
    sent = {"OpenStack-API-Version": "placement latest"}
    if token:
        sent["X-Auth-Token"] = token
    sent.update(headers or {})
    status, answer_headers, raw = send(f"http://127.0.0.1:{PORT}{path}", method, body, sent,
                                       timeout=30)
    return status, dict(answer_headers), raw


@contextmanager
def server_database(workdir):
    """The URL of a database of the suite's engine for a server: a SQLite file in
    workdir, or a new PostgreSQL or MySQL database on the suite's server (as Placement's
    line names it), dropped afterwards."""
    if connection.vendor not in SERVERS:
        yield f"sqlite:///{workdir}/db.sqlite3"
        return
    scheme, connect, default_port, drop = SERVERS[connection.vendor]
    suite = settings.DATABASES["default"]
    host, port = suite["HOST"] or "127.0.0.1", int(suite["PORT"] or default_port)
    admin = connect(host=host, port=port, user=suite["USER"] or None,
                    password=suite["PASSWORD"] or None)
    name = f"placement_live_t_{uuid.uuid4().hex[:10]}"
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {name}")
    try:
        credentials = quote(suite["USER"] or "", safe="")
        if suite["PASSWORD"]:
            credentials += ":" + quote(suite["PASSWORD"], safe="")
        yield scheme.format(credentials=credentials, host=host, port=port, name=name)
    finally:
        with admin.cursor() as cursor:
            cursor.execute(drop.format(name=name))
        admin.close()


def _postgresql_admin(**server):
    admin = psycopg2.connect(dbname="postgres", connect_timeout=5, **server)
    admin.autocommit = True
    return admin


def _mysql_admin(**server):
    return pymysql.connect(autocommit=True, connect_timeout=5, **server)


# vendor: (URL of the new database, admin connection, default port, DROP statement)
SERVERS = {
    "postgresql": ("postgresql://{credentials}@{host}:{port}/{name}", _postgresql_admin, 5432,
                   "DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    "mysql": ("mysql+pymysql://{credentials}@{host}:{port}/{name}?charset=utf8", _mysql_admin,
              3306, "DROP DATABASE IF EXISTS {name}"),
}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("live")
    with server_database(workdir) as url:
        yield from _live_server(workdir, url)


def _live_server(workdir, database_url):
    # policy.yaml beside placement.conf, found without being named (as in /etc/placement)
    (workdir / "policy.yaml").write_text(
        "# every endpoint rule open, as an operator's policy.yaml would say it\n"
        + "".join(f'"{name}": "@"\n' for name in ENDPOINT_RULES))
    conf_path = workdir / "placement.conf"
    conf_path.write_text(f"""
[placement_database]
connection = {database_url}
[placement]
max_allocation_candidates = 1
[django]
data_dir = {workdir}/data
allowed_hosts = ui.example.com
""")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env=server_environ(conf_path), check=True)
    log_path = workdir / "server.log"
    # A file, not a pipe: one log line per request would fill a pipe nobody reads.
    with open(log_path, "w") as log:
        server = start(conf_path, log=log)
        try:
            if not wait_for_port(PORT, server, 60):
                pytest.fail(f"server did not start: {log_path.read_text()}")
            yield SimpleNamespace(dir=workdir, database_url=database_url, log=log_path)
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_yaml_policy_override_takes_effect(live):
    """The default rules would refuse a token without roles everywhere."""
    status, headers, body = call("GET", "/traits?name=startswith:HW_CPU")
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    status, _, body = call("POST", "/resource_providers", body={"name": "cn1"})
    assert status == 200, body


def test_options_of_the_file_take_effect(live):
    for name in ("a", "b"):
        status, _, body = call("POST", "/resource_providers", body={"name": f"max-{name}"})
        uuid = json.loads(body)["uuid"]
        status, _, body = call("PUT", f"/resource_providers/{uuid}/inventories", body={
            "resource_provider_generation": 0, "inventories": {"VCPU": {"total": 4}}})
        assert status == 200, body
    status, _, body = call("GET", "/allocation_candidates?resources=VCPU:1")
    assert status == 200
    assert len(json.loads(body)["allocation_requests"]) == 1  # max_allocation_candidates
    assert (live.dir / "data" / "secret_key").exists()  # generated for this installation


def test_the_server_writes_to_the_database_of_its_placement_conf(live):
    status, _, body = call("POST", "/resource_providers", body={"name": "where-am-i"})
    assert status == 200, body
    sql = "SELECT uuid FROM resource_providers WHERE name = 'where-am-i'"
    if live.database_url.startswith("sqlite:///"):
        connection = sqlite3.connect(live.database_url[len("sqlite:///"):])
        rows = connection.execute(sql).fetchall()
    elif live.database_url.startswith("mysql"):   # the MariaDB pass
        parts = urlparse(live.database_url)
        connection = pymysql.connect(host=parts.hostname, port=parts.port or 3306,
                                     user=parts.username, password=parts.password or "",
                                     database=parts.path.lstrip("/"))
        with connection.cursor() as cursor:
            cursor.execute(sql)
            rows = cursor.fetchall()
    else:  # the PostgreSQL pass: the fixture's throw-away database
        connection = psycopg2.connect(live.database_url)
        with connection.cursor() as cursor:
            cursor.execute(sql)
            rows = cursor.fetchall()
    connection.close()
    assert [uuid.UUID(str(row[0])) for row in rows] == [uuid.UUID(json.loads(body)["uuid"])]
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[1]
    assert live.database_url.startswith({"sqlite3": "sqlite:", "postgresql": "postgresql:",
                                          "mysql": "mysql"}[
        engine])


def test_any_host_gets_json_while_the_ui_keeps_its_host_check(live):
    status, headers, body = call("GET", "/", headers={"Host": "placement_api:8778"})
    assert status == 200 and headers["Content-Type"] == "application/json"
    status, _, body = call("GET", "/resource_providers", token="",
                           headers={"Host": "placement_api:8778"})
    assert status == 401 and json.loads(body)["title"] == "Unauthorized"
    status, _, _ = call("GET", "/ui/", headers={"Host": "placement_api:8778"})
    assert status == 400


def _policy_errors(live, logged):
    return [line for line in live.log.read_text()[logged:].splitlines()
            if " ERROR foundation.api.policy " in line]


def test_a_policy_file_broken_later_keeps_the_last_good_rules(live):
    # The worker looks at its policy files at most once a second
    # (policy.POLICY_FILES_CHECKED_EVERY): each edit is polled for, a little longer.
    policy = live.dir / "policy.yaml"
    good = policy.read_text()
    logged = len(live.log.read_text())
    try:
        policy.write_text('"placement:traits:list": [unclosed\n')
        os.utime(policy, (time.time() + 5, time.time() + 5))
        deadline = time.monotonic() + 3
        while not _policy_errors(live, logged) and time.monotonic() < deadline:
            assert call("GET", "/traits")[0] == 200
            time.sleep(0.1)
        assert call("GET", "/traits")[0] == 200
        errors = _policy_errors(live, logged)
        assert len(errors) == 1, live.log.read_text()[logged:]
        assert (f"[oslo_policy] {policy}: unusable policy rules: " in errors[0]
                and errors[0].endswith("; the previous rules stay in force")), errors
        policy.write_text('"placement:traits:list": "!"\n')
        os.utime(policy, (time.time() + 10, time.time() + 10))
        deadline = time.monotonic() + 3
        while call("GET", "/traits")[0] == 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert call("GET", "/traits")[0] == 403
    finally:
        policy.write_text(good)
        os.utime(policy, (time.time() + 15, time.time() + 15))


@pytest.mark.parametrize("text, message", [
    ("[placement]\nmax_allocation_candidates = lots\n",
     "[placement] max_allocation_candidates: bad value in"),
    ("[placement_database]\nconnection = mysql+pymysql://root@127.0.0.1/placement?x=1\n",
     "unknown query parameter x"),
    ("[oslo_policy]\npolicy_file = /nonexistent/policy.yaml\n",
     "[oslo_policy] policy_file: no such file /nonexistent/policy.yaml"),
    ("[oslo_policy]\npolicy_file = broken.yaml\n", "unusable policy rules"),
])
def test_a_bad_option_stops_the_start_with_one_line(tmp_path, text, message):
    (tmp_path / "broken.yaml").write_text("- a list\n- not a mapping: [\n")
    conf_path = tmp_path / "placement.conf"
    with server_database(tmp_path) as database_url:
        if "[placement_database]" not in text:
            text = f"[placement_database]\nconnection = {database_url}\n" + text
        conf_path.write_text(text + f"[django]\ndata_dir = {tmp_path}\n")
        server = start(conf_path, port=PORT + 1)
        try:
            _, stderr = server.communicate(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
    assert server.returncode != 0
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if "configuration error" in line]
    assert len(errors) == 1 and message in errors[0], stderr


def test_requests_go_on_when_postgresql_closed_the_kept_connections(live):
    """The worker keeps its database connections ([placement_database] conn_max_age); when
    the server closes them between requests (a restart, pg_terminate_backend), the next
    requests open new ones instead of failing."""
    if not live.database_url.startswith("postgresql:"):
        pytest.skip("SQLite connections are not closed by a server")
    for _ in range(3):
        assert call("GET", "/resource_providers")[0] == 200
    admin = psycopg2.connect(live.database_url)
    admin.autocommit = True
    others = ("FROM pg_stat_activity WHERE datname = current_database() "
              "AND pid <> pg_backend_pid()")
    with admin.cursor() as cursor:
        cursor.execute(f"SELECT count(*) {others}")
        assert cursor.fetchone()[0] >= 1   # the worker's
        cursor.execute(f"SELECT pg_terminate_backend(pid) {others}")
        deadline = time.monotonic() + 10
        while True:
            cursor.execute(f"SELECT count(*) {others}")
            if cursor.fetchone()[0] == 0:
                break
            assert time.monotonic() < deadline
            time.sleep(0.05)
    admin.close()
    for _ in range(3):
        status, _, body = call("GET", "/resource_providers")
        assert status == 200, body


def test_the_release_and_its_configuration_are_logged_at_start(live):
    from placement_site import __version__

    log = live.log.read_text()
    assert f"placement-django {__version__}: configuration {live.dir}/placement.conf" in log
