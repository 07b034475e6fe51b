"""/resource_providers/{uuid}/aggregates (aggregates.md).

Quirk (http.md §1): here the Accept/Content-Type check comes before version
gating, hence media_first=True.
"""
from django.utils import timezone
from rest_framework.response import Response

from foundation.api.microversion import AGGREGATES_GENERATION, PROVIDER_AGGREGATES
from foundation.api.viewsets import PlacementViewSet, endpoint
from providers.api.schemas import AGGREGATES_GENERATION_SCHEMA, AGGREGATES_SCHEMA
from providers.selectors import providers as selectors
from providers.services import aggregates as services


class ProviderAggregateViewSet(PlacementViewSet):

    def _render(self, request, provider, aggregates):
        body = {"aggregates": aggregates}
        if request.version >= AGGREGATES_GENERATION:
            body["resource_provider_generation"] = provider.generation
        return self.cache_headers(request, Response(body), timezone.now())

    @endpoint("placement:resource_providers:aggregates:list", min_version=PROVIDER_AGGREGATES,
              accept=True, media_first=True)
    def list(self, request, uuid):
        provider = selectors.provider_get(uuid)
        return self._render(request, provider, selectors.aggregate_uuids_of(provider))

    @endpoint("placement:resource_providers:aggregates:update", min_version=PROVIDER_AGGREGATES,
              content_type=True, media_first=True)
    def update(self, request, uuid):
        provider = selectors.provider_get(uuid)
        with_generation = request.version >= AGGREGATES_GENERATION
        body = self.json_body(request, AGGREGATES_GENERATION_SCHEMA if with_generation
                              else AGGREGATES_SCHEMA)
        aggregates = body["aggregates"] if with_generation else body
        services.aggregates_replace(
            provider=provider, aggregate_uuids=aggregates,
            generation=body["resource_provider_generation"] if with_generation else None,
            bump_generation=with_generation)
        return self._render(request, provider, aggregates)
