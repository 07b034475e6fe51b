"""GET /allocation_candidates: parse -> engine -> present (allocation-candidates.md)."""
import gc
import json
from contextlib import contextmanager

try:  # ten times faster on the large bodies this endpoint produces
    import orjson
except ImportError:  # pragma: no cover - orjson is in requirements.txt
    orjson = None

from django.http import HttpResponse

from candidates import engine, present
from candidates.options import engine_options
from candidates.request import parse_request
from placement_site.api.viewsets import PlacementViewSet, endpoint


def _dumps(document):
    if orjson is not None:
        return orjson.dumps(document)
    return json.dumps(document, separators=(",", ":"), check_circular=False)


@contextmanager
def _no_cyclic_gc():
    """Building thousands of small dicts and tuples triggers the cyclic collector
    over and over (it scans every live object of the process each time); none of
    them form cycles, so pause it for the request."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class AllocationCandidateViewSet(PlacementViewSet):

    @endpoint("placement:allocation_candidates:list", min_version=(1, 10), accept=True,
              query=True)
    def list(self, request):
        parsed = parse_request(request.GET, request.version)
        view = parsed.view
        with _no_cyclic_gc():
            result = engine.find_candidates(
                parsed.query,
                whole_trees=view.tree_summaries,
                all_classes=view.all_classes,
                with_traits=view.traits,
                **engine_options(),
            )
            # Encoded straight into an HttpResponse: these bodies can be large and
            # DRF's renderer adds nothing here.
            body = _dumps(present.render(result, view))
            # freed before the collector is back on, so its first pass finds little
            del result
        response = HttpResponse(body, content_type="application/json")
        return self.cache_headers(request, response)
