from candidates.api.views import AllocationCandidateViewSet
from placement_site.api.routes import route

urlpatterns = [
    route("allocation_candidates", AllocationCandidateViewSet, {"get": "list"}),
]
