"""An answer's memory goes back as soon as it is sent, without waiting for the cyclic
collector (PlacementViewSet.dispatch): a worker serving large answers back to back would
otherwise hold each of them until the collector's next full pass.

Requests go through Django's WSGI handler, as gunicorn calls it (the test client keeps
references of its own to every response), with the benchmarks' helper (bench/wsgi.py)."""
import gc

import pytest
from django.http import HttpResponseBase

from bench.wsgi import wsgi_get
from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def _responses_left_to_the_collector(path, query=""):
    """Serve one request with the collector off; the responses it then finds
    unreachable (kept alive only by reference cycles)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        size = wsgi_get(path, query)()
        gc.collect()
        stranded = [o for o in gc.garbage if isinstance(o, HttpResponseBase)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert size > 0
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
