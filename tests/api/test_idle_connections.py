"""A served process closes connections left idle (foundation/db_pool.py's janitor); the
next request on that thread must reconnect and answer, not fail on closing them again.

PyMySQL refuses to close a connection twice ("Already closed"): once the janitor had
closed a thread's connection, Django's per-request check of CONN_MAX_AGE closed it a
second time and every such request was a 500. psycopg2 closes twice silently, so this
is the MariaDB pass's test above all; it runs on PostgreSQL too. SQLite has no pool.
"""
import subprocess
import sys
import time

import pytest
from django.db import connection

from tests.api.test_live_server import PORT as LIVE_SERVER_PORT
from tests.api.test_live_server import ROOT, server_database, server_environ
from tests.http import send, wait_for_port

PORT = LIVE_SERVER_PORT + 1   # next to test_live_server's, per database

pytestmark = pytest.mark.skipif(connection.vendor not in ("postgresql", "mysql"),
                                reason="only PostgreSQL and MySQL connections are pooled")


@pytest.fixture
def server(tmp_path):
    with server_database(tmp_path) as url:
        conf_path = tmp_path / "placement.conf"
        # idle connections closed after 0.5 s; Django's own age limit 1 s
        conf_path.write_text(f"""
[placement_database]
connection = {url}
conn_max_idle = 0.5
conn_max_age = 1
[django]
data_dir = {tmp_path}/data
""")
        environ = server_environ(conf_path)
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                       cwd=ROOT, env=environ, check=True)
        log_path = tmp_path / "server.log"
        with open(log_path, "w") as log:
            # one thread: every request is served on the connection the janitor closed
            process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "placement_site.wsgi:application",
                 "--bind", f"127.0.0.1:{PORT}", "--workers", "1", "--threads", "1",
                 "--log-level", "warning"],
                cwd=ROOT, env=environ, stdout=subprocess.DEVNULL, stderr=log)
            try:
                if not wait_for_port(PORT, process, 60):
                    pytest.fail(f"server did not start: {log_path.read_text()}")
                yield log_path
            finally:
                process.terminate()
                process.wait(timeout=30)


def list_providers():
    status, _, body = send(f"http://127.0.0.1:{PORT}/resource_providers",
                           headers={"X-Auth-Token": "admin"}, timeout=30)
    return status, body


def test_a_connection_closed_while_idle_is_reopened_by_the_next_request(server):
    answers = []
    for _ in range(3):
        answers.append(list_providers())
        time.sleep(2.5)   # past conn_max_idle (the janitor closes) and conn_max_age
    answers.append(list_providers())
    assert [status for status, _ in answers] == [200] * 4, answers
    assert "Already closed" not in server.read_text()
