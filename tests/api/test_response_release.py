"""An answer's memory goes back as soon as it is sent, without waiting for the cyclic
collector (PlacementViewSet.dispatch): a worker serving large answers back to back would
otherwise hold each of them until the collector's next full pass.

Requests go through Django's WSGI handler, as gunicorn calls it (the test client keeps
references of its own to every response)."""
import gc
import io
import sys

import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from django.http import HttpResponseBase

from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def _serve(path, query=""):
    environ = {
        "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query,
        "SERVER_NAME": "testserver", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr,
        "HTTP_X_AUTH_TOKEN": "admin", "HTTP_OPENSTACK_API_VERSION": "placement latest",
    }
    statuses = []
    # as Django's test client does: the test's transaction lives on this connection
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        body = WSGIHandler()(environ, lambda status, headers, exc_info=None: statuses.append(status))
        size = sum(len(chunk) for chunk in body)
        body.close()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
    return statuses[0], size


def _responses_left_to_the_collector(path, query=""):
    """Serve one request with the collector off; the responses it then finds
    unreachable (kept alive only by reference cycles)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        status, size = _serve(path, query)
        gc.collect()
        stranded = [o for o in gc.garbage if isinstance(o, HttpResponseBase)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert status.startswith("200") and size > 0
    return stranded


@pytest.fixture
def cloud():
    for n in range(3):
        make_provider(f"cn{n}", inventory={"VCPU": 8, "MEMORY_MB": 4096})


@pytest.mark.parametrize("path,query", [
    ("/allocation_candidates", "resources=VCPU:1"),   # an HttpResponse built by the view
    ("/resource_providers", ""),                      # a DRF Response rendered by Django
    ("/", ""),
])
def test_an_answer_is_freed_once_sent(cloud, path, query):
    assert _responses_left_to_the_collector(path, query) == []
