from allocations.api.reshaper_views import ReshaperViewSet
from allocations.api.views.allocations import AllocationViewSet
from allocations.api.views.usages import (
    ProviderAllocationsViewSet,
    ProviderUsagesViewSet,
    UsagesViewSet,
)
from foundation.api.routes import route

urlpatterns = [
    route("allocations", AllocationViewSet, {"post": "create"}),
    route("allocations/<str:consumer_uuid>", AllocationViewSet,
          {"get": "retrieve", "put": "update", "delete": "destroy"}),
    route("resource_providers/<str:uuid>/allocations", ProviderAllocationsViewSet,
          {"get": "list"}),
    route("resource_providers/<str:uuid>/usages", ProviderUsagesViewSet, {"get": "list"}),
    route("usages", UsagesViewSet, {"get": "list"}),
    route("reshaper", ReshaperViewSet, {"post": "create"}),
]
