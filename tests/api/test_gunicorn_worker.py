"""The gunicorn workers the scripts serve with, through a real gunicorn process (sync and
threaded) and raw sockets: Placement's JSON error body even for what gunicorn refuses
before Django sees the request, and a service that keep-alive clients cannot take down."""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gunicorn.config import Config

from placement_site import gunicorn_worker

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30  # generous: the machine may be loaded
# gunicorn's --timeout; the workers wait at most half of it for a client's bytes.
WORKER_TIMEOUT = 6
# How long a next request on a connection may take to be answered or refused by a close;
# above the half of WORKER_TIMEOUT the workers wait at most for bytes a client owes.
FOLLOW_UP_TIMEOUT = 10
WORKERS = {
    "sync": ["--worker-class", "placement_site.gunicorn_worker.PlacementSync"],
    "threaded": ["--worker-class", "placement_site.gunicorn_worker.PlacementThreaded",
                 "--threads", "4"],
}
ADMIN = b"Host: x\r\nX-Auth-Token: admin\r\n"


class Server(int):
    """The port of a running gunicorn, which knows its worker kind."""

    def __new__(cls, port, kind):
        server = super().__new__(cls, port)
        server.kind = kind
        return server


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "template.sqlite3"
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env=dict(os.environ, DATABASE_URL=f"sqlite:///{path}"), check=True)
    return path


@pytest.fixture(scope="module", params=sorted(WORKERS))
def server(request, migrated, tmp_path_factory):
    database = tmp_path_factory.mktemp(request.param) / "db.sqlite3"
    shutil.copy(migrated, database)
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "placement_site.wsgi:application",
         *WORKERS[request.param], "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--timeout", str(WORKER_TIMEOUT), "--log-level", "critical"],
        cwd=ROOT, env=dict(os.environ, DATABASE_URL=f"sqlite:///{database}"))
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("gunicorn did not start")
                time.sleep(0.1)
        yield Server(port, request.param)
    finally:
        process.terminate()
        process.wait(timeout=TIMEOUT)


def _connect(port):
    return socket.create_connection(("127.0.0.1", int(port)), timeout=TIMEOUT)


def _response(sock):
    """Read one response from the socket: (status, {header: value}, body bytes)."""
    response = http.client.HTTPResponse(sock)
    response.begin()
    body = response.read()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def _next_request(sock):
    """Send a next request on a connection that has had its answer: "answered" when it
    gets its own answer, "closed" when the server closed the connection instead; a
    connection that does neither within FOLLOW_UP_TIMEOUT hangs, and fails the test."""
    sock.settimeout(FOLLOW_UP_TIMEOUT)
    try:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        status, _, body = _response(sock)
    except (ConnectionResetError, BrokenPipeError):  # http.client.RemoteDisconnected too
        return "closed"
    except TimeoutError:
        pytest.fail("the connection hangs: the next request is neither answered nor refused "
                    "by a close")
    assert status == 200 and json.loads(body)["versions"][0]["id"] == "v1.0"
    return "answered"


def _exchange(port, raw, half_close=False):
    """One request on a new connection, and its answer. Unless the client half-closed,
    a next request on the same connection is then answered, or the connection closed
    (it must be, after `Connection: close`): never left hanging."""
    with _connect(port) as sock:
        sock.sendall(raw)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        response = _response(sock)
        if not half_close:
            after = _next_request(sock)
            if response[1].get("connection", "").lower() == "close":
                assert after == "closed", response
        return response


def _placement_error(status, headers, body, detail):
    assert headers["content-type"] == "application/json"
    assert headers["x-openstack-request-id"].startswith("req-")
    error = json.loads(body)["errors"][0]
    assert error["status"] == status == 400 and error["title"] == "Bad Request"
    assert error["request_id"] == headers["x-openstack-request-id"]
    assert detail in error["detail"]


def _answers(port):
    status, _, body = _exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    return status == 200 and json.loads(body)["versions"][0]["id"] == "v1.0"


@pytest.mark.parametrize("raw, detail", [
    (b"Content-Length: hi mom\r\n", "content-length header must be an integer"),
    (b"Content-Length: -2\r\n", "Invalid Content-Length header"),
    (b"Content-Length: 2\r\nContent-Length: 2\r\n", "Invalid Content-Length header"),
    (b"X-Big: " + b"a" * 9000 + b"\r\n", "Error parsing headers"),
    (b"X-Nul: a\x00b\r\n", "Invalid HTTP Header: 'X-NUL'"),
], ids=["non-numeric-length", "negative-length", "duplicated-length", "oversized-header",
        "nul-in-header"])
def test_headers_gunicorn_refuses_get_placement_error(server, raw, detail):
    request = (b"POST /resource_providers HTTP/1.1\r\n" + ADMIN
               + b"Content-Type: application/json\r\n" + raw + b"\r\n{}")
    _placement_error(*_exchange(server, request), detail)


def test_oversized_request_line_gets_placement_error(server):
    request = b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n" + ADMIN + b"\r\n"
    _placement_error(*_exchange(server, request), "Request Line is too large")


def test_body_shorter_than_its_content_length_is_never_applied(server):
    document = b'{"name": "short-body"}'
    request = (b"POST /resource_providers HTTP/1.1\r\n" + ADMIN
               + b"Content-Type: application/json\r\nContent-Length: "
               + str(len(document) + 10).encode() + b"\r\n\r\n" + document)
    status, headers, body = _exchange(server, request, half_close=True)
    _placement_error(status, headers, body, "Malformed JSON: the request body ended 10 bytes")
    listing = _exchange(server, b"GET /resource_providers?name=short-body HTTP/1.1\r\n" + ADMIN
                        + b"Connection: close\r\n\r\n")
    assert listing[0] == 200 and json.loads(listing[2]) == {"resource_providers": []}


def test_nul_in_an_ignored_query_string_is_ignored(server):
    status, _, _ = _exchange(server, b"GET /?a=%00 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200
    request = b"GET /resource_providers?name=%00 HTTP/1.1\r\n" + ADMIN + b"\r\n"
    _placement_error(*_exchange(server, request),
                     "Invalid query string parameters: NUL characters are not allowed")


# Refused before the body was read: 403 policy, 404 version gating, 415, 400 (a body
# that Placement parses only after policy) — each with its body sent only after the answer.
REFUSED = [
    (b"POST /resource_providers", b"X-Auth-Token: user\r\nContent-Type: application/json\r\n", 403),
    (b"POST /reshaper", b"X-Auth-Token: admin\r\nContent-Type: application/json\r\n", 404),
    (b"POST /resource_providers", b"X-Auth-Token: admin\r\nContent-Type: text/plain\r\n", 415),
    (b"POST /resource_providers", b"X-Auth-Token: admin\r\n", 400),
]


def test_refusals_with_late_bodies_on_idle_keep_alive_connections(server):
    body = b'{"name": "late-body"}'
    idle = []
    try:
        for path, headers, expected in REFUSED + REFUSED[:2]:  # more than the 4 threads
            sock = _connect(server)
            idle.append(sock)
            sock.sendall(path + b" HTTP/1.1\r\nHost: x\r\n" + headers
                         + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
            status, response_headers, _ = _response(sock)
            assert status == expected
            # the unread body must not be taken for the next request
            assert response_headers["connection"] == "close"
            try:
                sock.sendall(body)  # a later TCP segment; then the client stays idle
            except OSError:
                pass  # the server may already have closed: that is fine too
        assert _answers(server)
        # and each of those connections was closed, not left waiting for a next request
        assert [_next_request(sock) for sock in idle] == ["closed"] * len(idle)
    finally:
        for sock in idle:
            sock.close()


def test_keep_alive_connections_are_reused(server):
    with _connect(server) as sock:
        body = b'{"name": "kept-alive"}'
        sock.sendall(b"POST /resource_providers HTTP/1.1\r\n" + ADMIN
                     + b"Content-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)
        status, headers, _ = _response(sock)
        assert status == 201  # microversion 1.0: created, no body
        if server.kind == "sync":  # one request per connection
            assert headers["connection"] == "close"
            return
        assert headers.get("connection") != "close"
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _response(sock)[0] == 200


def test_a_client_that_stops_mid_request_does_not_block_others(server):
    # More than the threaded worker's 4 threads; the sync worker serves one at a time.
    stalled = [_connect(server) for _ in range(5 if server.kind == "threaded" else 2)]
    try:
        for sock in stalled:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        # the threaded worker keeps answering; the sync worker after its read timeout
        assert _answers(server)
    finally:
        for sock in stalled:
            sock.close()


@pytest.mark.parametrize("name, threads, expected", [
    ("PlacementSync", 1, gunicorn_worker.PlacementSync),
    ("PlacementSync", 4, gunicorn_worker.PlacementSync),
    ("PlacementThreaded", 4, gunicorn_worker.PlacementThreaded),
])
def test_gunicorn_keeps_our_worker_classes_whatever_the_threads(name, threads, expected):
    config = Config()
    config.set("worker_class", f"placement_site.gunicorn_worker.{name}")
    config.set("threads", threads)
    assert config.worker_class is expected


def test_worker_class_loads_before_django_settings_exist():
    # gunicorn imports the worker class before the application sets
    # DJANGO_SETTINGS_MODULE (scripts/conformance-server has it unset)
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run([sys.executable, "-c", "import placement_site.gunicorn_worker"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
