"""/allocations/{consumer_uuid} and POST /allocations (allocations.md §2-§5)."""
from django.conf import settings
from rest_framework.response import Response

from allocations import rules, selectors, services
from allocations.payloads import consumer_request, post_schema, put_schema
from foundation.api.microversion import (
    ALLOCATION_PROJECT_USER,
    CONSUMER_GENERATIONS,
    CONSUMER_TYPES,
    DICT_ALLOCATIONS,
    POST_ALLOCATIONS,
)
from foundation.api.viewsets import PlacementViewSet, endpoint


class AllocationViewSet(PlacementViewSet):

    @endpoint("placement:allocations:list", accept=True)
    def retrieve(self, request, consumer_uuid):
        found = selectors.consumer_allocations_get(consumer_uuid=consumer_uuid)
        body = {"allocations": found.allocations}
        if found.allocations:
            if request.version >= DICT_ALLOCATIONS:
                body["project_id"] = found.project_id
                body["user_id"] = found.user_id
            if request.version >= CONSUMER_GENERATIONS:
                body["consumer_generation"] = found.generation
            if request.version >= CONSUMER_TYPES:
                body["consumer_type"] = found.consumer_type
        return self.cache_headers(request, Response(body), found.last_modified)

    @endpoint("placement:allocations:update", content_type=True)
    def update(self, request, consumer_uuid):
        consumer_uuid = rules.canonical_consumer_uuid(consumer_uuid)
        data = self.json_body(request, put_schema(request.version))
        wanted = consumer_request(request.version, consumer_uuid, data)
        services.allocations_replace(
            consumers=[wanted], on_unknown_class=services.put_unknown_class(consumer_uuid))
        return self.no_content()

    @endpoint("placement:allocations:delete")
    def destroy(self, request, consumer_uuid):
        services.allocations_delete(consumer_uuid=consumer_uuid)
        return self.no_content()

    @endpoint("placement:allocations:manage", min_version=POST_ALLOCATIONS, content_type=True)
    def create(self, request):
        data = self.json_body(request, post_schema(request.version))
        wanted = [consumer_request(request.version, consumer_uuid, body)
                  for consumer_uuid, body in data.items()]
        services.allocations_replace(
            consumers=wanted, on_unknown_class=services.post_unknown_class)
        return self.no_content()

