"""GET /allocation_candidates: parse -> engine -> present (allocation-candidates.md)."""
import gc
import threading
import time
from contextlib import contextmanager

from django.http import HttpResponse

from candidates import engine, present
from candidates.options import engine_options
from candidates.request import parse_request
from placement_site.api.renderers import FastJSONRenderer
from placement_site.api.microversion import ALLOCATION_CANDIDATES
from placement_site.api.viewsets import PlacementViewSet, endpoint
from placement_site.ops import metrics


_pause_lock = threading.Lock()
_pausing = 0            # requests of this process inside _no_cyclic_gc
_enable_after = False   # the collector was on when the first of them paused it


@contextmanager
def _no_cyclic_gc():
    """Building thousands of small dicts and tuples triggers the cyclic collector
    over and over (it scans every live object of the process each time); none of
    them form cycles, so pause it for the request. The collector is process-wide:
    with threaded workers it stays off until the last of the requests pausing it
    ends (each turning it back on at its own end would let it run inside the others)."""
    global _pausing, _enable_after
    with _pause_lock:
        if _pausing == 0:
            _enable_after = gc.isenabled()
            gc.disable()
        _pausing += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pausing -= 1
            if _pausing == 0 and _enable_after:
                gc.enable()


class AllocationCandidateViewSet(PlacementViewSet):

    @endpoint("placement:allocation_candidates:list", min_version=ALLOCATION_CANDIDATES,
              accept=True, query=True)
    def list(self, request):
        started = time.perf_counter()
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
            # DRF's content negotiation adds nothing here.
            body = FastJSONRenderer().render(present.render(result, view))
            metrics.observe_candidates(time.perf_counter() - started, len(result.candidates))
            # freed before the collector is back on, so its first pass finds little
            del result
        response = HttpResponse(body, content_type="application/json")
        return self.cache_headers(request, response)
