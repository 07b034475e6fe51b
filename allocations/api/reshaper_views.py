"""POST /reshaper (reshaper.md): policy, schema, one reshape() call, 204."""
from allocations.payloads import reshape_arguments, reshaper_schema
from allocations.reshaper import reshape
from foundation.api.microversion import RESHAPER
from foundation.api.viewsets import PlacementViewSet, endpoint


class ReshaperViewSet(PlacementViewSet):

    @endpoint("placement:reshaper:reshape", min_version=RESHAPER, content_type=True)
    def create(self, request):
        data = self.json_body(request, reshaper_schema(request.version))
        reshape(**reshape_arguments(request.version, data))
        return self.no_content()
