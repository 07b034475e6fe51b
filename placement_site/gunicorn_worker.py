"""The gunicorn worker class the service runs with (gunicorn_conf.py selects it, so plain
`gunicorn placement_site.wsgi:application` from the checkout runs it): gunicorn's threaded
worker plus what keeps the wire Placement's where gunicorn itself answers or waits.

- A request gunicorn cannot parse (bad or duplicated Content-Length, oversized request
  line or header, NUL in a header, ...) gets Placement's JSON error body, not HTML.
- A request whose body was refused unread (request_body.py: too large, cut short) closes
  the connection (`Connection: close`): the unread bytes would otherwise be parsed as the
  next request. Before closing, the server stops writing and reads what the client still
  sends for a moment, so the client reads the answer instead of a reset.
- Every socket read waits at most half the worker timeout (--timeout), so a client that
  stops sending in the middle of a request cannot hold a thread for ever.

A client that sends slowly still holds a thread while it sends: production puts nginx in
front (placement_site/serve.py), which hands gunicorn only whole requests.
"""
import json
import socket
import time
import uuid

from gunicorn import util
from gunicorn.http import errors as http_errors
from gunicorn.workers.gthread import ThreadWorker

from placement_site.api.errors import CONTENT_LENGTH_NOT_INTEGER, error_body
from placement_site.request_body import BODY_UNREAD

# Requests gunicorn refuses while parsing them; the rest of handle_error's cases are 500s.
_REFUSED_REQUESTS = (
    http_errors.InvalidRequestLine, http_errors.InvalidRequestMethod,
    http_errors.InvalidHTTPVersion, http_errors.InvalidHeader, http_errors.InvalidHeaderName,
    http_errors.LimitRequestLine, http_errors.LimitRequestHeaders,
    http_errors.InvalidProxyLine, http_errors.ForbiddenProxyRequest,
    http_errors.InvalidSchemeHeaders, http_errors.UnsupportedTransferCoding,
    http_errors.ObsoleteFolding,
)
_STATUS_LINES = {400: "400 Bad Request", 403: "403 Forbidden",
                 500: "500 Internal Server Error"}
# How long a closing connection keeps reading what the client still sends, and how much.
LINGER_SECONDS = 1.0
LINGER_BYTES = 1 << 20


def _refusal_detail(exc):
    """Placement's wording where it has one, gunicorn's description otherwise."""
    if isinstance(exc, http_errors.InvalidHeader) and exc.hdr == "CONTENT-LENGTH":
        values = [value for name, value in getattr(exc.req, "headers", None) or ()
                  if name == "CONTENT-LENGTH"]
        if len(values) == 1 and not values[0].lstrip("-").isdigit():
            return CONTENT_LENGTH_NOT_INTEGER
        return "Invalid Content-Length header"
    if isinstance(exc, http_errors.LimitRequestLine):
        return "Request Line is too large"
    if isinstance(exc, http_errors.LimitRequestHeaders):
        return f"Error parsing headers: '{exc}'"
    return str(exc) or type(exc).__name__


def _answer(client, status, detail):
    """Write a complete JSON error response and ask for the connection to close."""
    request_id = f"req-{uuid.uuid4()}"
    body = json.dumps(error_body(status, detail, request_id)).encode()
    head = (f"HTTP/1.1 {_STATUS_LINES[status]}\r\n"
            "Connection: close\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"x-openstack-request-id: {request_id}\r\n\r\n")
    try:
        util.write_nonblock(client, head.encode("latin1") + body)
    except OSError:
        pass


def _linger(sock):
    """Half-close, then read (and drop) what the client still sends for a moment.

    Closing a socket whose unread bytes are still arriving sends a reset, and a reset can
    make the client lose the answer it has not read yet."""
    try:
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + LINGER_SECONDS
        drained = 0
        while drained < LINGER_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            drained += len(chunk)
    except OSError:
        pass


class _Lingering:
    """The app's response iterable; closing it (after gunicorn sent the response) lingers
    on the socket when the request body was left unread."""

    def __init__(self, iterable, sock):
        self._iterable = iterable
        self._sock = sock

    def __iter__(self):
        return iter(self._iterable)

    def close(self):
        try:
            if hasattr(self._iterable, "close"):
                self._iterable.close()
        finally:
            _linger(self._sock)


def _framed(app):
    """Wrap the WSGI app: close a connection whose request body was left unread."""

    def application(environ, start_response):
        def start(status, headers, exc_info=None):
            response = getattr(start_response, "__self__", None)  # gunicorn's Response
            if environ.get(BODY_UNREAD) and hasattr(response, "force_close"):
                response.force_close()  # Connection: close; no next request is parsed
            return start_response(status, headers, exc_info)

        result = app(environ, start)
        sock = environ.get("gunicorn.socket")
        if environ.get(BODY_UNREAD) and sock is not None:
            return _Lingering(result, sock)
        return result

    return application


class PlacementThreaded(ThreadWorker):
    """gunicorn's threaded worker (--threads N): keep-alive connections, N threads."""

    def load_wsgi(self):
        super().load_wsgi()
        self.wsgi = _framed(self.wsgi)

    def _read_timeout(self):
        return self.cfg.timeout / 2 if self.cfg.timeout else None

    def handle_error(self, req, client, addr, exc):
        if isinstance(exc, _REFUSED_REQUESTS):
            self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
            status = 403 if isinstance(exc, http_errors.ForbiddenProxyRequest) else 400
            _answer(client, status, _refusal_detail(exc))
            return
        self.log.exception("Error handling request")
        _answer(client, 500, f"{type(exc).__name__}: {exc}")

    def handle(self, conn):
        conn.sock.settimeout(self._read_timeout())
        return super().handle(conn)
