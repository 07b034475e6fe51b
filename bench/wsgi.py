"""Requests served through Django's WSGI handler, as a gunicorn worker serves them
(the test client keeps references of its own to every response, which would hide what
a worker holds)."""
import io
import sys

from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections

from bench import BenchError


def wsgi_get(path, query):
    """A function sending GET path?query as the admin through Django's WSGI handler; it
    reads and closes the body as a server does and returns its size (BenchError unless
    200)."""
    handler = WSGIHandler()

    def serve():
        environ = {
            "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query,
            "SERVER_NAME": "localhost", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr,
            "HTTP_X_AUTH_TOKEN": "admin", "HTTP_OPENSTACK_API_VERSION": "placement latest",
        }
        status = []
        # one connection throughout, as a worker keeps it for conn_max_age (and the
        # test client does)
        signals.request_started.disconnect(close_old_connections)
        signals.request_finished.disconnect(close_old_connections)
        try:
            body = handler(environ, lambda line, headers, exc_info=None: status.append(line))
            size = sum(len(chunk) for chunk in body)
            body.close()
        finally:
            signals.request_started.connect(close_old_connections)
            signals.request_finished.connect(close_old_connections)
        if not status[0].startswith("200"):
            raise BenchError(f"{path}?{query}: HTTP {status[0]}")
        return size

    return serve
