"""GET / : the version document (http.md §2)."""
from rest_framework.response import Response

from foundation.api import microversion
from foundation.api.viewsets import PlacementViewSet, endpoint


class RootViewSet(PlacementViewSet):

    @endpoint(policy_rule=None)
    def retrieve(self, request):
        document = {"versions": [{
            "id": "v1.0",
            "max_version": str(microversion.latest()),
            "min_version": str(microversion.MIN),
            "status": "CURRENT",
            "links": [{"rel": "self", "href": ""}],
        }]}
        return self.cache_headers(request, Response(document))
