"""POST /reshaper (reshaper.md): policy, schema, one reshape() call, 204."""
from allocations.api.schemas import reshaper_schema
from allocations.api.views.allocations import consumer_request
from allocations.reshaper import ProviderInventories, reshape
from foundation.api.microversion import RESHAPER
from foundation.api.viewsets import PlacementViewSet, endpoint


def reshape_arguments(version, data):
    """The keyword arguments of reshape() for a body valid at `version`."""
    inventories = [
        ProviderInventories(provider_uuid=rp_uuid,
                            generation=entry["resource_provider_generation"],
                            inventories=entry["inventories"])
        for rp_uuid, entry in data["inventories"].items()
    ]
    consumers = [consumer_request(version, consumer_uuid, body)
                 for consumer_uuid, body in data["allocations"].items()]
    return {"inventories": inventories, "consumers": consumers}


class ReshaperViewSet(PlacementViewSet):

    @endpoint("placement:reshaper:reshape", min_version=RESHAPER, content_type=True)
    def create(self, request):
        data = self.json_body(request, reshaper_schema(request.version))
        reshape(**reshape_arguments(request.version, data))
        return self.no_content()
