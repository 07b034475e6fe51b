"""/resource_providers and /resource_providers/{uuid} (resource-providers.md)."""

import jsonschema
from django.utils import timezone
from rest_framework.response import Response

from foundation import db_retry, jsonschemas, uuids
from foundation.domain_errors import InvalidInput
from foundation.api.microversion import (
    CREATE_RETURNS_PROVIDER,
    MIN_VERSION,
    NESTED_PROVIDERS,
    PROVIDER_AGGREGATES,
    PROVIDER_ALLOCATIONS_LINK,
    REPARENT,
    TRAITS,
    ZERO_CAPACITY,
)
from foundation.api.viewsets import PlacementViewSet, endpoint, latest
from providers import query_params, rules
from providers.api.schemas import create_schema, list_query_schema, update_schema
from providers.selectors import providers as selectors
from providers.services import providers as services

# Query-string uuids must be canonical (spec README "UUID forms"), unlike body uuids.
_QUERY_FORMATS = jsonschema.FormatChecker(formats=())


@_QUERY_FORMATS.checks("uuid")
def _is_canonical_uuid(value):
    return not isinstance(value, str) or uuids.is_canonical_uuid(value)


def list_query_refusal(params, version):
    """The jsonschema.ValidationError refusing list query `params` ({key: last value})
    at `version`, or None. Its str() is what the API's 400 message says after
    "Invalid query string parameters: "; `.message` is that text's first line
    (the operator UI shows it without the schema dump)."""
    return jsonschemas.first_error(params, list_query_schema(version), _QUERY_FORMATS)


def capacity_rule(version):
    """Inventory capacity rule for a microversion (1.26 allows capacity 0)."""
    return rules.CAPACITY_NON_NEGATIVE if version >= ZERO_CAPACITY else rules.CAPACITY_POSITIVE


class ProviderRepresentation:
    """Builds the provider JSON for a microversion from a selector row."""

    LINKS = (("self", ""), ("inventories", "/inventories"), ("usages", "/usages"),
             ("aggregates", "/aggregates"), ("traits", "/traits"),
             ("allocations", "/allocations"))
    LINK_VERSIONS = {"aggregates": PROVIDER_AGGREGATES, "traits": TRAITS,
                     "allocations": PROVIDER_ALLOCATIONS_LINK}

    def __init__(self, viewset, version):
        self.prefix = viewset.href("")   # looked up once, not per link of every provider
        self.tree_fields = version >= NESTED_PROVIDERS
        self.links = [(rel, suffix) for rel, suffix in self.LINKS
                      if version >= self.LINK_VERSIONS.get(rel, MIN_VERSION)]

    def __call__(self, row):
        base = f"{self.prefix}/resource_providers/{row['uuid']}"
        body = {
            "uuid": row["uuid"],
            "name": row["name"],
            "generation": row["generation"],
            "links": [{"rel": rel, "href": base + suffix} for rel, suffix in self.links],
        }
        if self.tree_fields:
            body["parent_provider_uuid"] = row["parent_uuid"]
            body["root_provider_uuid"] = row["root_uuid"]
        return body


def modified(row):
    return row["updated_at"] or row["created_at"]


class ResourceProviderViewSet(PlacementViewSet):

    def _query(self, request):
        params = {key: request.GET.getlist(key)[-1] for key in request.GET}
        refusal = list_query_refusal(params, request.version)
        if refusal is not None:
            raise InvalidInput(f"Invalid query string parameters: {refusal}")
        filters = {key: params[key] for key in ("name", "uuid", "in_tree") if key in params}
        if "member_of" in params:
            filters["member_of"] = query_params.parse_member_of(
                request.GET.getlist("member_of"), request.version)
        if "required" in params:
            filters["required"] = query_params.parse_required(
                request.GET.getlist("required"), request.version)
        if "resources" in params:
            filters["resources"] = query_params.parse_resources(params["resources"])
        return filters

    @endpoint("placement:resource_providers:list", accept=True, query=True)
    def list(self, request):
        rows = selectors.provider_list(**self._query(request))
        render = ProviderRepresentation(self, request.version)
        response = Response({"resource_providers": [render(row) for row in rows]})
        return self.cache_headers(request, response, latest(*(modified(r) for r in rows)))

    @endpoint("placement:resource_providers:create", content_type=True)
    def create(self, request):
        body = self.json_body(request, create_schema(request.version))
        row, _ = _written_and_read(lambda: (services.provider_create(
            name=body["name"], uuid=body.get("uuid"),
            parent_uuid=body.get("parent_provider_uuid")), None))
        location = self.location(request, f"/resource_providers/{row['uuid']}")
        if request.version < CREATE_RETURNS_PROVIDER:
            return self.no_content(201, {"Location": location})
        response = Response(ProviderRepresentation(self, request.version)(row),
                            headers={"Location": location})
        return self.cache_headers(request, response, timezone.now())

    @endpoint("placement:resource_providers:show", accept=True)
    def retrieve(self, request, uuid):
        provider = selectors.provider_get(uuid)
        row = selectors.provider_row(provider.pk)
        response = Response(ProviderRepresentation(self, request.version)(row))
        return self.cache_headers(request, response, modified(row))

    @endpoint("placement:resource_providers:update", content_type=True)
    def update(self, request, uuid):
        selectors.provider_get(uuid)
        body = self.json_body(request, update_schema(request.version))
        row, previous = _written_and_read(lambda: services.provider_update(
            uuid=uuid, name=body["name"],
            parent_uuid=body.get("parent_provider_uuid", services.UNCHANGED),
            allow_reparent=request.version >= REPARENT))
        response = Response(ProviderRepresentation(self, request.version)(row))
        return self.cache_headers(request, response, previous)

    @endpoint("placement:resource_providers:delete")
    def destroy(self, request, uuid):
        services.provider_delete(uuid=uuid)
        return self.no_content()


def _written_and_read(write):
    """write() returns (provider, other): (the provider's representation row, other),
    the row read in the write's own transaction. Once its COMMIT has been answered
    nothing more is asked of the database, so a server lost then cannot turn a saved
    write into a failure."""
    def write_then_read():
        provider, other = write()
        return selectors.provider_row(provider.pk), other
    return db_retry.run(write_then_read)
