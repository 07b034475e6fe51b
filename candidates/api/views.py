"""GET /allocation_candidates: parse -> engine -> present (allocation-candidates.md)."""
import time

from django.http import FileResponse, HttpResponse

from candidates import engine, present
from candidates.options import engine_options, extensions
from candidates.request import parse_query_string
from foundation.api.renderers import FastJSONRenderer
from foundation.api.microversion import ALLOCATION_CANDIDATES
from foundation.api.viewsets import PlacementViewSet, endpoint
from foundation.ops import collector, metrics

# What a server without wsgi.file_wrapper reads of a very large body at a time.
SENT_BLOCK_BYTES = 1024 * 1024


class AllocationCandidateViewSet(PlacementViewSet):

    @endpoint("placement:allocation_candidates:list", min_version=ALLOCATION_CANDIDATES,
              accept=True, query=True)
    def list(self, request):
        started = time.perf_counter()
        # check_query_decodes (the endpoint's query=True) has refused what is not UTF-8
        parsed = parse_query_string(request.META.get("QUERY_STRING", ""), request.version,
                                    extensions())
        view = parsed.view
        # building thousands of small objects, none in a cycle (foundation.ops.collector)
        with collector.paused():
            result = engine.find_candidates(
                parsed.query,
                whole_trees=view.tree_summaries,
                all_classes=view.all_classes,
                with_traits=view.traits,
                **engine_options(),
            )
            # Encoded straight into an HttpResponse: these bodies can be large and
            # DRF's content negotiation adds nothing here.
            body, streamed = present.render_body(result, view, FastJSONRenderer().render)
            metrics.observe_candidates(time.perf_counter() - started, len(result.candidates))
            # freed before the collector is back on, so its first pass finds little
            del result
        if streamed is None:
            response = HttpResponse(body, content_type="application/json")
        else:
            # a very large answer, sent from the file it was written to, with its length
            # (the response closes the file; a server with wsgi.file_wrapper, as gunicorn,
            # sends it with sendfile)
            length, spooled = streamed
            response = FileResponse(spooled, content_type="application/json")
            response.block_size = SENT_BLOCK_BYTES
            response["Content-Length"] = str(length)
        return self.cache_headers(request, response)
