"""/resource_classes and /resource_classes/{name} (resource-classes.md)."""
import json

from django.db.models import Max
from rest_framework.response import Response

from foundation.domain_errors import InvalidInput
from foundation.api.microversion import RESOURCE_CLASS_PUT_CREATES, RESOURCE_CLASSES
from foundation.api.viewsets import PlacementViewSet, endpoint, latest, validate
from providers.api.schemas import CUSTOM_NAME_SCHEMA
from providers.api.schemas import RESOURCE_CLASS_BODY_SCHEMA as BODY_SCHEMA
from providers.exceptions import ResourceClassNotFound
from providers.models import ResourceClass
from providers.services import resource_classes as services


class ResourceClassViewSet(PlacementViewSet):

    def _representation(self, name):
        return {"name": name,
                "links": [{"rel": "self", "href": self.href(f"/resource_classes/{name}")}]}

    @endpoint("placement:resource_classes:list", min_version=RESOURCE_CLASSES, accept=True)
    def list(self, request):
        classes = list(ResourceClass.objects.order_by("id").values("name", "created_at",
                                                                    "updated_at"))
        response = Response({"resource_classes": [
            self._representation(rc["name"]) for rc in classes]})
        stamps = [latest(rc["created_at"], rc["updated_at"]) for rc in classes]
        return self.cache_headers(request, response, latest(*stamps))

    @endpoint("placement:resource_classes:create", min_version=RESOURCE_CLASSES, content_type=True)
    def create(self, request):
        name = self.json_body(request, BODY_SCHEMA)["name"]
        services.resource_class_create(name=name)
        return self.no_content(201, {"Location": self.location(request,
                                                               f"/resource_classes/{name}")})

    @endpoint("placement:resource_classes:show", min_version=RESOURCE_CLASSES, accept=True)
    def retrieve(self, request, name):
        rc = ResourceClass.objects.filter(name=name).first()
        if rc is None:
            raise ResourceClassNotFound(name)
        response = Response(self._representation(rc.name))
        return self.cache_headers(request, response, latest(rc.created_at, rc.updated_at))

    def update(self, request, name):
        if request.version >= RESOURCE_CLASS_PUT_CREATES:
            return self._ensure(request, name)
        return self._rename(request, name)

    @endpoint("placement:resource_classes:update", min_version=RESOURCE_CLASSES, content_type=True)
    def _rename(self, request, name):
        new_name = self.json_body(request, BODY_SCHEMA)["name"]
        rc = services.resource_class_rename(name=name, new_name=new_name)
        return Response(self._representation(rc.name))

    @endpoint("placement:resource_classes:update", min_version=RESOURCE_CLASS_PUT_CREATES)
    def _ensure(self, request, name):
        validate_custom_name(name)
        _, created = services.resource_class_ensure(name=name)
        location = self.location(request, f"/resource_classes/{name}")
        return self.no_content(201 if created else 204, {"Location": location})

    @endpoint("placement:resource_classes:delete", min_version=RESOURCE_CLASSES)
    def destroy(self, request, name):
        services.resource_class_delete(name=name)
        return self.no_content()


def validate_custom_name(name):
    """Validate a path name as Placement does: as a JSON string against the pattern."""
    if '"' in name or "\\" in name:
        raise InvalidInput(f"Malformed JSON: cannot embed {json.dumps(name)}")
    validate(name, CUSTOM_NAME_SCHEMA, "JSON does not validate: ")
