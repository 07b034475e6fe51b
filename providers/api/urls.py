from placement_site.api.routes import route
from providers.api.views.resource_classes import ResourceClassViewSet
from providers.api.views.traits import TraitViewSet

urlpatterns = [
    route("resource_classes", ResourceClassViewSet,
          {"get": "list", "post": "create"}),
    route("resource_classes/<str:name>", ResourceClassViewSet,
          {"get": "retrieve", "put": "update", "delete": "destroy"}),
    route("traits", TraitViewSet, {"get": "list"}),
    route("traits/<str:name>", TraitViewSet,
          {"get": "retrieve", "put": "update", "delete": "destroy"}),
]
