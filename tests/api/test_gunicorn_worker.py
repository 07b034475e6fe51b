"""The gunicorn worker class the scripts serve with: Placement's JSON error body even
for what gunicorn refuses before Django sees the request."""
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _exchange(port, raw):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, body


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{tmp_path_factory.mktemp('g')}/db.sqlite3")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "placement_site.wsgi:application",
         "--worker-class", "placement_site.gunicorn_worker.PlacementSyncWorker",
         "--bind", f"127.0.0.1:{port}", "--workers", "1", "--log-level", "error"],
        cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("gunicorn did not start")
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_content_length_that_is_not_a_number_gets_placement_error(server):
    status, headers, body = _exchange(
        server, b"POST /resource_providers HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: hi mom\r\n\r\n{}")
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert headers["x-openstack-request-id"].startswith("req-")
    error = json.loads(body)["errors"][0]
    assert error["status"] == 400 and error["title"] == "Bad Request"
    assert "content-length header must be an integer" in error["detail"]
    assert error["request_id"] == headers["x-openstack-request-id"]


def test_other_requests_pass_through(server):
    status, headers, body = _exchange(
        server, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 200
    assert json.loads(body)["versions"][0]["id"] == "v1.0"
    # a framing error that is not about an integer keeps gunicorn's own answer
    status, _, _ = _exchange(
        server, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
                b"Content-Length: 2\r\n\r\nab")
    assert status == 400


def test_worker_class_loads_before_django_settings_exist():
    # gunicorn imports the worker class before the application sets
    # DJANGO_SETTINGS_MODULE (scripts/conformance-server has it unset)
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run([sys.executable, "-c", "import placement_site.gunicorn_worker"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
