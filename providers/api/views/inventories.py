"""/resource_providers/{uuid}/inventories[/{resource_class}] (inventories.md)."""
from django.utils import timezone
from rest_framework.response import Response

from foundation.domain_errors import NotFound
from foundation.api.microversion import DELETE_ALL_INVENTORIES
from foundation.api.viewsets import PlacementViewSet, endpoint, latest
from providers.api.schemas import (
    BASE_INVENTORY_SCHEMA,
    POST_INVENTORY_SCHEMA,
    PUT_INVENTORIES_SCHEMA,
)
from providers.api.views.resource_providers import capacity_rule
from providers.models import Inventory
from providers.selectors import providers as selectors
from providers.services import inventories as services


def stored_record(inventory):
    """A stored inventory as JSON (allocation_ratio always a float)."""
    return {
        "total": inventory.total,
        "reserved": inventory.reserved,
        "min_unit": inventory.min_unit,
        "max_unit": inventory.max_unit,
        "step_size": inventory.step_size,
        "allocation_ratio": float(inventory.allocation_ratio),
    }


def modified(inventory):
    return inventory.updated_at or inventory.created_at


class InventoryViewSet(PlacementViewSet):

    # --- the collection ------------------------------------------------------

    @endpoint("placement:resource_providers:inventories:list", accept=True)
    def list(self, request, uuid):
        provider = selectors.provider_get(uuid)
        inventories = selectors.inventories_of(provider)
        response = Response({
            "resource_provider_generation": provider.generation,
            "inventories": {name: stored_record(inv) for name, inv in inventories.items()},
        })
        stamp = latest(*(modified(inv) for inv in inventories.values()))
        # Quirk (http.md §7): no Last-Modified for an empty collection.
        return self.cache_headers(request, response, stamp, omit_last_modified=stamp is None)

    @endpoint("placement:resource_providers:inventories:create", content_type=True)
    def create(self, request, uuid):
        provider = selectors.provider_get(uuid)
        body = self.json_body(request, POST_INVENTORY_SCHEMA)
        resource_class = body["resource_class"]
        record = services.inventory_create(
            provider=provider, resource_class=resource_class, record=body,
            capacity_rule=capacity_rule(request.version))
        location = self.location(
            request, f"/resource_providers/{provider.uuid}/inventories/{resource_class}")
        response = Response({"resource_provider_generation": provider.generation, **record},
                            status=201, headers={"Location": location})
        return self.cache_headers(request, response, timezone.now())

    @endpoint("placement:resource_providers:inventories:update", content_type=True)
    def replace(self, request, uuid):
        provider = selectors.provider_get(uuid)
        body = self.json_body(request, PUT_INVENTORIES_SCHEMA)
        records = services.inventories_replace(
            provider=provider, generation=body["resource_provider_generation"],
            inventories=body["inventories"], capacity_rule=capacity_rule(request.version))
        response = Response({"resource_provider_generation": provider.generation,
                             "inventories": records})
        return self.cache_headers(request, response, timezone.now())

    @endpoint("placement:resource_providers:inventories:delete", min_version=DELETE_ALL_INVENTORIES,
              gate_status=405)
    def destroy_all(self, request, uuid):
        provider = selectors.provider_get(uuid)
        services.inventories_delete(provider=provider)
        return self.no_content()

    # --- one resource class ------------------------------------------------------

    @endpoint("placement:resource_providers:inventories:show", accept=True)
    def retrieve(self, request, uuid, resource_class):
        provider = selectors.provider_get(uuid)
        inventory = (Inventory.objects
                     .filter(provider=provider, resource_class__name=resource_class).first())
        if inventory is None:
            raise NotFound(f"No inventory of class {resource_class} for {uuid}")
        response = Response({"resource_provider_generation": provider.generation,
                             **stored_record(inventory)})
        return self.cache_headers(request, response, modified(inventory))

    @endpoint("placement:resource_providers:inventories:update", content_type=True)
    def update(self, request, uuid, resource_class):
        provider = selectors.provider_get(uuid)
        body = self.json_body(request, BASE_INVENTORY_SCHEMA)
        record = services.inventory_set(
            provider=provider, resource_class=resource_class,
            generation=body["resource_provider_generation"], record=body,
            capacity_rule=capacity_rule(request.version))
        response = Response({"resource_provider_generation": provider.generation, **record})
        return self.cache_headers(request, response, timezone.now())

    @endpoint("placement:resource_providers:inventories:delete")
    def destroy(self, request, uuid, resource_class):
        provider = selectors.provider_get(uuid)
        services.inventory_delete(provider=provider, resource_class=resource_class)
        return self.no_content()
