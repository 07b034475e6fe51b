from candidates.api.views import AllocationCandidateViewSet
from foundation.api.routes import route

urlpatterns = [
    route("allocation_candidates", AllocationCandidateViewSet, {"get": "list"}),
]
