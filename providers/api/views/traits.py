"""/traits and /traits/{name} (traits.md; provider traits live in provider_traits.py)."""
from rest_framework.response import Response

from foundation.domain_errors import InvalidInput
from foundation.api.microversion import TRAITS
from foundation.api.viewsets import PlacementViewSet, endpoint, latest
from providers.api.schemas import TRAITS_QUERY_SCHEMA
from providers.exceptions import TraitNotFound
from providers.models import ProviderTrait, Trait
from providers.services import traits as services


class TraitViewSet(PlacementViewSet):

    @endpoint("placement:traits:list", min_version=TRAITS, accept=True, query=True)
    def list(self, request):
        params = self.query_params(request, TRAITS_QUERY_SCHEMA)
        traits = Trait.objects.all()
        if "name" in params:
            value = params["name"]
            if ":" not in value:
                raise InvalidInput(
                    "Badly formatted name parameter. Expected name query string parameter "
                    "in form: ?name=[in|startswith]:[name1,name2|prefix]. "
                    f'Got: "{value}"')
            operator, _, argument = value.partition(":")
            if operator == "in":
                traits = traits.filter(name__in=[n for n in argument.split(",") if n])
            elif operator == "startswith":
                traits = traits.filter(name__startswith=argument)
        if "associated" in params:
            associated = params["associated"].lower()
            if associated not in ("true", "false"):
                raise InvalidInput(
                    'The query parameter "associated" only accepts "true" or "false"')
            linked = ProviderTrait.objects.values("trait_id")
            traits = (traits.filter(id__in=linked) if associated == "true"
                      else traits.exclude(id__in=linked))
        rows = list(traits.values_list("name", "created_at", "updated_at"))
        response = Response({"traits": [name for name, _, _ in rows]})
        stamp = latest(*(latest(c, u) for _, c, u in rows))
        return self.cache_headers(request, response, stamp)

    @endpoint("placement:traits:show", min_version=TRAITS)
    def retrieve(self, request, name):
        trait = Trait.objects.filter(name=name).first()
        if trait is None:
            raise TraitNotFound([name])
        return self.cache_headers(request, self.no_content(),
                                  latest(trait.created_at, trait.updated_at))

    @endpoint("placement:traits:update", min_version=TRAITS)
    def update(self, request, name):
        trait, created = services.trait_ensure(name=name)
        response = self.no_content(201 if created else 204,
                                   {"Location": self.location(request, f"/traits/{name}")})
        return self.cache_headers(request, response, trait.created_at)

    @endpoint("placement:traits:delete", min_version=TRAITS)
    def destroy(self, request, name):
        services.trait_delete(name=name)
        return self.no_content()
