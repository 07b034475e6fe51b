"""The front door, through real served instances and raw sockets (docs/operators/front-door.md):

- "front-door": the production set-up, `python -m placement_site.serve` (nginx in front
  of gunicorn), as scripts/serve, the conformance server and CI run it;
- "plain-gunicorn": `gunicorn placement_site.wsgi:application --threads 4` run from the
  checkout, no nginx: it warns that it serves without the front door, and the request
  body rule (foundation/request_body.py) still holds.

Placement's JSON error body for what the servers refuse themselves, the body limit (413
before the body is sent), short bodies never applied, half-sent requests that do not
stall the service, idle keep-alive connections that outlast clients' pauses.
"""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30  # generous: the machine may be loaded
# gunicorn's --timeout; its worker waits at most half of it for a client's bytes.
WORKER_TIMEOUT = 6
BODY_LIMIT = 65536  # [api] max_request_body_size for these servers
ADMIN = b"Host: x\r\nX-Auth-Token: admin\r\n"
COMMANDS = {
    "front-door": ["-m", "placement_site.serve", "--workers", "1", "--threads", "4"],
    "plain-gunicorn": ["-m", "gunicorn", "placement_site.wsgi:application", "--threads", "4"],
}
# What the servers say, in `detail`, when they refuse a request themselves
MALFORMED = {"front-door": "the request is malformed"}


class Server(int):
    """The port of a running server, which knows its kind."""

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


def _serve(kind, migrated, directory):
    if kind == "front-door" and not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
        pytest.skip("no nginx (scripts/bootstrap-nginx installs Debian's package)")
    database = directory / "db.sqlite3"
    shutil.copy(migrated, database)
    port = _free_port()
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{database}",
               PLACEMENT_MAX_REQUEST_BODY_SIZE=str(BODY_LIMIT))
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    # run from the checkout: gunicorn reads ./gunicorn.conf.py there
    process = subprocess.Popen(
        [sys.executable, *COMMANDS[kind], "--bind", f"127.0.0.1:{port}",
         "--timeout", str(WORKER_TIMEOUT), "--log-level", "critical"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 2 * TIMEOUT
    while True:
        try:
            with _connect(port) as sock:
                sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if _response(sock)[0] == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise RuntimeError(f"{kind} did not start")
        time.sleep(0.2)
    return process, Server(port, kind)


def _stop(process):
    process.terminate()
    process.wait(timeout=TIMEOUT)


@pytest.fixture(scope="module", params=["front-door"])
def server(request, migrated, tmp_path_factory):
    process, port = _serve(request.param, migrated, tmp_path_factory.mktemp(request.param))
    yield port
    _stop(process)


@pytest.fixture(scope="module", params=["front-door", "plain-gunicorn"])
def any_server(request, migrated, tmp_path_factory):
    process, port = _serve(request.param, migrated, tmp_path_factory.mktemp(request.param))
    yield port
    _stop(process)


def _connect(port, timeout=TIMEOUT):
    return socket.create_connection(("127.0.0.1", int(port)), timeout=timeout)


def _response(sock):
    """Read one response from the socket: (status, {header: value}, body bytes)."""
    response = http.client.HTTPResponse(sock)
    response.begin()
    body = response.read()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def _exchange(port, raw, half_close=False):
    """One request on a new connection, and its answer."""
    with _connect(port) as sock:
        sock.sendall(raw)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return _response(sock)


def _placement_error(status, headers, body, detail, expected=400):
    assert headers["content-type"] == "application/json"
    assert headers["x-openstack-request-id"].startswith("req-")
    error = json.loads(body)["errors"][0]
    assert error["status"] == status == expected
    assert error["title"] == {400: "Bad Request", 413: "Request Entity Too Large"}[expected]
    assert error["request_id"] == headers["x-openstack-request-id"]
    assert detail.lower() in error["detail"].lower()


def _answers(port, timeout=TIMEOUT):
    with _connect(port, timeout) as sock:
        sock.sendall(b"GET /resource_providers HTTP/1.1\r\n" + ADMIN
                     + b"Connection: close\r\n\r\n")
        status, _, body = _response(sock)
    return status == 200 and "resource_providers" in json.loads(body)


def _post_provider(name, declared=None, padding=0):
    document = json.dumps({"name": name}).encode() + b" " * padding
    length = len(document) if declared is None else declared
    return (b"POST /resource_providers HTTP/1.1\r\n" + ADMIN
            + b"Content-Type: application/json\r\nContent-Length: "
            + str(length).encode() + b"\r\n\r\n" + document)


def _provider_exists(port, name):
    status, _, body = _exchange(port, b"GET /resource_providers?name=" + name.encode()
                                + b" HTTP/1.1\r\n" + ADMIN + b"Connection: close\r\n\r\n")
    assert status == 200
    return bool(json.loads(body)["resource_providers"])


@pytest.mark.parametrize("raw, detail", [
    (b"Content-Length: hi mom\r\n", "content-length header must be an integer"),
    (b"Content-Length: 2\r\nContent-Length: 2\r\n", "Invalid Content-Length header"),
    (b"X-Big: " + b"a" * 9000 + b"\r\n", "Error parsing headers"),
    (b"X-Nul: a\x00b\r\n", "Invalid HTTP Header: 'X-NUL'"),
], ids=["non-numeric-length", "duplicated-length", "oversized-header", "nul-in-header"])
def test_requests_the_server_refuses_get_placement_error(server, raw, detail):
    if server.kind in MALFORMED and "integer" not in detail:
        detail = MALFORMED[server.kind]
    request = (b"POST /resource_providers HTTP/1.1\r\n" + ADMIN
               + b"Content-Type: application/json\r\n" + raw + b"\r\n{}")
    _placement_error(*_exchange(server, request), detail)


def test_oversized_request_line_with_a_body_on_a_kept_alive_connection(server):
    # issue 34, 8: a JSON 400 the client can read, not a reset
    with _connect(server) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _response(sock)[0] == 200
        body = b"x" * 100_000
        sock.sendall(b"POST /" + b"a" * 9000 + b" HTTP/1.1\r\n" + ADMIN
                     + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        detail = MALFORMED.get(server.kind, "Request Line is too large")
        _placement_error(*_response(sock), detail)


def test_the_request_line_limit_is_the_one_the_ui_states(server):
    # the candidates page says from which size a query is refused (front_door.py)
    from foundation.front_door import REQUEST_LINE_LIMIT, request_line_bytes

    path = "/resource_providers?name="
    longest = path + "a" * (REQUEST_LINE_LIMIT - request_line_bytes(path))
    for target, expected in ((longest, 200), (longest + "a", 400)):
        assert request_line_bytes(target) == REQUEST_LINE_LIMIT + (expected == 400)
        status, _, _ = _exchange(server, f"GET {target} HTTP/1.1\r\n".encode() + ADMIN
                                 + b"Connection: close\r\n\r\n")
        assert status == expected, (len(target), server.kind)


def test_body_above_the_limit_is_refused_before_it_is_sent(any_server):
    # issue 34, 2: 413 with Placement's error body, and nothing of the body was needed
    with _connect(any_server) as sock:
        sock.sendall(b"PUT /resource_providers/" + str(uuid.uuid4()).encode()
                     + b"/aggregates HTTP/1.1\r\n" + ADMIN
                     + b"Content-Type: application/json\r\nContent-Length: "
                     + str(BODY_LIMIT + 1).encode() + b"\r\n\r\n")
        _placement_error(*_response(sock), f"{BODY_LIMIT}", expected=413)


def test_chunked_body_above_the_limit_is_refused(any_server):
    chunk = b"[" + b" " * 8190 + b"]"
    request = (b"POST /resource_providers HTTP/1.1\r\n" + ADMIN
               + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    with _connect(any_server) as sock:
        sock.sendall(request)
        try:
            for _ in range(BODY_LIMIT // len(chunk) + 2):
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # refused before the end: the answer is waiting
        _placement_error(*_response(sock), f"{BODY_LIMIT}", expected=413)


def test_body_of_the_limit_is_accepted(any_server):
    name = f"at-the-limit-{any_server.kind}"
    padding = BODY_LIMIT - len(json.dumps({"name": name}))
    status, _, _ = _exchange(any_server, _post_provider(name, padding=padding))
    assert status == 201
    assert _provider_exists(any_server, name)


def test_body_shorter_than_its_content_length_is_never_applied(any_server):
    # issue 34, 3: with any worker the cut body is refused, never applied
    name = f"short-body-{any_server.kind}"
    request = _post_provider(name, declared=len(json.dumps({"name": name})) + 10)
    try:
        status, headers, body = _exchange(any_server, request, half_close=True)
    except (ConnectionError, http.client.RemoteDisconnected):
        assert any_server.kind == "front-door"  # nginx drops a request cut short, unanswered
    else:
        _placement_error(status, headers, body, "the request body ended 10 bytes before")
    assert not _provider_exists(any_server, name)


def test_half_sent_requests_do_not_stall_the_service(server):
    # issue 34, 1: many more half-sent requests than threads; a normal request is answered
    # long before the server would give up on them (its read timeouts)
    if server.kind != "front-door":
        pytest.skip("gunicorn alone: a half-sent request holds a thread until its read "
                    "timeout; nginx is the front door that reads requests for it")
    stalled = [_connect(server) for _ in range(48)]
    try:
        for sock in stalled:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-A")  # headers never finished
        assert _answers(server, timeout=WORKER_TIMEOUT)
    finally:
        for sock in stalled:
            sock.close()


def test_idle_keep_alive_connection_outlasts_a_client_pause(server):
    # issue 34, 8: a connection kept for reuse is still open after a pause of seconds
    # (servers that close it sooner race the client's next request: RemoteDisconnected)
    with _connect(server) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, _ = _response(sock)
        assert status == 200 and headers.get("connection") != "close"
        time.sleep(7)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _response(sock)[0] == 200


def test_keep_alive_connections_are_reused_after_a_body(server):
    with _connect(server) as sock:
        sock.sendall(_post_provider(f"kept-alive-{server.kind}"))
        status, headers, _ = _response(sock)
        assert status == 201  # microversion 1.0: created, no body
        assert headers.get("connection") != "close"
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _response(sock)[0] == 200


def test_nul_in_an_ignored_query_string_is_ignored(server):
    status, _, _ = _exchange(server, b"GET /?a=%00 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200
    request = b"GET /resource_providers?name=%00 HTTP/1.1\r\n" + ADMIN + b"\r\n"
    _placement_error(*_exchange(server, request),
                     "Invalid query string parameters: NUL characters are not allowed")


def test_gunicorn_without_the_front_door_warns(tmp_path):
    port = _free_port()
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "placement_site.wsgi:application", "--check-config",
         "--bind", f"127.0.0.1:{port}"], cwd=ROOT, capture_output=True, text=True,
        timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "placement_site.wsgi:application",
         "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=ROOT, env=dict(os.environ, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        log = ""
        while "without the front door" not in log and time.monotonic() < deadline:
            log += process.stderr.readline()
    finally:
        _stop(process)
    assert f"gunicorn serves 127.0.0.1:{port} without the front door" in log
    assert "run placement-api" in log


def _get(port, path, *headers):
    raw = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n".encode()
           + b"".join(h + b"\r\n" for h in headers) + b"Connection: close\r\n\r\n")
    return _exchange(port, raw)


def test_pages_and_static_files_are_compressed_the_api_is_not(server):
    """Issue 52 row 4: the console's HTML and static files, gzip when asked for; the
    Placement API's JSON as Placement sends it."""
    import gzip

    status, headers, body = _get(server, "/static/ui/providers.js")
    assert status == 200 and headers.get("content-encoding") == "gzip"
    assert len(gzip.decompress(body)) > len(body)
    status, headers, body = _get(server, "/admin/login/")
    assert status == 200 and headers.get("content-encoding") == "gzip"
    assert b"<form" in gzip.decompress(body)
    status, headers, body = _get(server, "/resource_providers", b"X-Auth-Token: admin")
    assert status == 200 and "content-encoding" not in headers
    assert "resource_providers" in json.loads(body)
