"""/resource_providers/{uuid}/traits (traits.md, provider traits)."""
from rest_framework.response import Response

from foundation.api.microversion import TRAITS
from foundation.api.viewsets import PlacementViewSet, endpoint, latest
from providers.api.schemas import PROVIDER_TRAITS_SCHEMA
from providers.selectors import providers as selectors
from providers.services import provider_traits as services


class ProviderTraitViewSet(PlacementViewSet):

    def _render(self, request, provider, traits):
        response = Response({"traits": [trait.name for trait in traits],
                             "resource_provider_generation": provider.generation})
        stamp = latest(*(latest(t.created_at, t.updated_at) for t in traits))
        return self.cache_headers(request, response, stamp)

    @endpoint("placement:resource_providers:traits:list", min_version=TRAITS, accept=True)
    def list(self, request, uuid):
        provider = selectors.provider_get(uuid)
        return self._render(request, provider, selectors.traits_of(provider))

    @endpoint("placement:resource_providers:traits:update", min_version=TRAITS,
              content_type=True)
    def update(self, request, uuid):
        body = self.json_body(request, PROVIDER_TRAITS_SCHEMA)
        provider = selectors.provider_get(uuid)
        traits = services.provider_traits_replace(
            provider=provider, trait_names=body["traits"],
            generation=body["resource_provider_generation"])
        return self._render(request, provider, traits)

    @endpoint("placement:resource_providers:traits:delete", min_version=TRAITS)
    def destroy(self, request, uuid):
        provider = selectors.provider_get(uuid)
        services.provider_traits_delete(provider=provider)
        return self.no_content()
