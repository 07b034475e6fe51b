"""POST /reshaper (reshaper.md): policy, schema, one reshape() call, 204."""
import copy

from allocations.api import schemas as allocation_schemas
from allocations.api.views.allocations import consumer_request
from allocations.reshaper import ProviderInventories, reshape
from placement_site.api.microversion import CONSUMER_TYPES, MAPPINGS, RESHAPER
from placement_site.api.viewsets import PlacementViewSet, endpoint
from providers import rules

UUID_KEY = allocation_schemas.UUID_KEY
# Each provider's entry is the PUT /resource_providers/{uuid}/inventories body.
PROVIDER_INVENTORIES = rules.inventories_schema()


def _schema(allocations_schema):
    allocations_schema = copy.deepcopy(allocations_schema)
    allocations_schema["minProperties"] = 0
    return {
        "type": "object",
        "properties": {
            "inventories": {
                "type": "object",
                "patternProperties": {UUID_KEY: PROVIDER_INVENTORIES},
                "minProperties": 1,
                "additionalProperties": False,
            },
            "allocations": allocations_schema,
        },
        "required": ["inventories", "allocations"],
        "additionalProperties": False,
    }


# allocations: the POST /allocations schema of the microversion, minProperties 0.
RESHAPER_V1_30 = _schema(allocation_schemas.POST_V1_28)
RESHAPER_V1_34 = _schema(allocation_schemas.POST_V1_34)
RESHAPER_V1_38 = _schema(allocation_schemas.POST_V1_38)


def reshaper_schema(version):
    if version >= CONSUMER_TYPES:
        return RESHAPER_V1_38
    if version >= MAPPINGS:
        return RESHAPER_V1_34
    return RESHAPER_V1_30



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
