"""HTTP to the real servers some tests start (gunicorn, Keystone, memcached, databases):
one request, a free port to start one on, and waiting for a port to listen."""
import json
import socket
import time
import urllib.error
import urllib.request


def send(url, method="GET", body=None, headers=None, timeout=60):
    """(status, headers, raw body) of one HTTP request. body, when given, goes as JSON.
    An error status is answered like any other, not raised: the tests assert on it."""
    outgoing = urllib.request.Request(url, method=method)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        outgoing.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        outgoing.add_header(name, value)
    try:
        with urllib.request.urlopen(outgoing, data, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def wait_for_port(port, process, seconds):
    """True once 127.0.0.1:port accepts a connection; False when process (a Popen) has
    exited or `seconds` have passed first."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.2)


def free_port(ports, taken=()):
    """The first port of `ports` that is not in `taken` and nothing listens on."""
    for port in ports:
        if port in taken:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")
