"""Provider allocations/usages and GET /usages (allocations.md §6, usages.md)."""
from rest_framework.response import Response

from allocations import selectors
from allocations.payloads import usages_schema
from allocations.exceptions import ProviderNotFoundForAllocations, ProviderNotFoundForUsages
from foundation.api import policy
from foundation.api.microversion import CONSUMER_GENERATIONS, CONSUMER_TYPES, USAGES
from foundation.api.viewsets import PlacementViewSet, check_query_decodes, endpoint


class ProviderAllocationsViewSet(PlacementViewSet):

    @endpoint("placement:resource_providers:allocations:list", accept=True)
    def list(self, request, uuid):
        provider = selectors.provider_get(uuid=uuid, missing=ProviderNotFoundForAllocations)
        allocations, last_modified = selectors.provider_allocations_list(
            provider_id=provider["id"])
        if request.version < CONSUMER_GENERATIONS:
            for entry in allocations.values():
                del entry["consumer_generation"]
        body = {"allocations": allocations,
                "resource_provider_generation": provider["generation"]}
        return self.cache_headers(request, Response(body), last_modified)


class ProviderUsagesViewSet(PlacementViewSet):

    @endpoint("placement:resource_providers:usages", accept=True)
    def list(self, request, uuid):
        provider = selectors.provider_get(uuid=uuid, missing=ProviderNotFoundForUsages)
        body = {"resource_provider_generation": provider["generation"],
                "usages": selectors.provider_usages(provider_id=provider["id"])}
        return self.cache_headers(request, Response(body))


class UsagesViewSet(PlacementViewSet):

    # Policy is checked in the handler: its target is the queried project.
    @endpoint(None, min_version=USAGES, accept=True)
    def list(self, request):
        project_values = request.GET.getlist("project_id")
        policy.authorize(request, "placement:usages",
                         {"project_id": project_values[-1] if project_values else None})
        check_query_decodes(request)
        params = self.query_params(request, usages_schema(request.version))
        grouped = request.version >= CONSUMER_TYPES
        usages = selectors.usages_totals(
            project_id=params["project_id"], user_id=params.get("user_id"),
            consumer_type=params.get("consumer_type"), grouped=grouped)
        return self.cache_headers(request, Response({"usages": usages}))
