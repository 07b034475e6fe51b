from foundation.api.routes import route
from providers.api.views.aggregates import ProviderAggregateViewSet
from providers.api.views.inventories import InventoryViewSet
from providers.api.views.provider_traits import ProviderTraitViewSet
from providers.api.views.resource_classes import ResourceClassViewSet
from providers.api.views.resource_providers import ResourceProviderViewSet
from providers.api.views.traits import TraitViewSet

RP = "resource_providers/<str:uuid>"

urlpatterns = [
    route("resource_classes", ResourceClassViewSet,
          {"get": "list", "post": "create"}),
    route("resource_classes/<str:name>", ResourceClassViewSet,
          {"get": "retrieve", "put": "update", "delete": "destroy"}),
    route("traits", TraitViewSet, {"get": "list"}),
    route("traits/<str:name>", TraitViewSet,
          {"get": "retrieve", "put": "update", "delete": "destroy"}),
    route("resource_providers", ResourceProviderViewSet,
          {"get": "list", "post": "create"}),
    route(RP, ResourceProviderViewSet,
          {"get": "retrieve", "delete": "destroy", "put": "update"}),
    route(f"{RP}/inventories", InventoryViewSet,
          {"get": "list", "post": "create", "put": "replace", "delete": "destroy_all"}),
    route(f"{RP}/inventories/<str:resource_class>", InventoryViewSet,
          {"get": "retrieve", "put": "update", "delete": "destroy"}),
    route(f"{RP}/aggregates", ProviderAggregateViewSet, {"get": "list", "put": "update"}),
    route(f"{RP}/traits", ProviderTraitViewSet,
          {"get": "list", "put": "update", "delete": "destroy"}),
]
