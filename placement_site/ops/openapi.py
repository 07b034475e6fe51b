"""The OpenAPI 3.1 document of the Placement API at the latest microversion.

One source: paths and methods come from the route table (placement_site/urls.py),
request bodies and query parameters are the very JSON schemas the views validate
with (imported, never copied), so the document cannot drift from validation. Only
the response schemas are written here (the code does not validate its answers); the
test suite checks them against real responses. `python manage.py openapi` writes it;
GET /openapi.json serves it (no token).
"""
import json
import re
from functools import lru_cache

from django.http import HttpResponse
from django.urls import URLPattern, URLResolver, get_resolver

from allocations.api import schemas as allocation_schemas
from allocations.api.reshaper_views import reshaper_schema
from candidates.request import query_schema as candidates_query_schema
from placement_site.api import microversion
from placement_site.ops.logs import REQUEST_ID
from providers.api.views import aggregates as aggregate_views
from providers.api.views import inventories as inventory_views
from providers.api.views import provider_traits as provider_trait_views
from providers.api.views import resource_classes as resource_class_views
from providers.api.views import resource_providers as provider_views
from providers.api.views import traits as trait_views

LATEST = microversion.MAX

UUID = {"type": "string", "format": "uuid"}
NAME = {"type": "string"}
COUNT = {"type": "integer", "minimum": 0}
LINKS = {"type": "array", "items": {
    "type": "object", "properties": {"rel": {"type": "string"}, "href": {"type": "string"}},
    "required": ["rel", "href"], "additionalProperties": False}}


def _object(properties, required=None, additional=False):
    return {"type": "object", "properties": properties,
            "required": list(properties) if required is None else required,
            "additionalProperties": additional}


def _map(values):
    """A JSON object whose keys are names or uuids and whose values are `values`."""
    return {"type": "object", "additionalProperties": values}


def _ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


INVENTORY = _object({
    "total": {"type": "integer"}, "reserved": {"type": "integer"},
    "min_unit": {"type": "integer"}, "max_unit": {"type": "integer"},
    "step_size": {"type": "integer"}, "allocation_ratio": {"type": "number"}})

RESPONSE_SCHEMAS = {
    "Error": _object({"errors": {"type": "array", "minItems": 1, "items": _object({
        "status": {"type": "integer"},
        "title": {"type": "string"},
        "detail": {"type": "string"},
        "request_id": {"type": "string", "pattern": REQUEST_ID.pattern},
        "code": {"type": "string", "pattern": r"^placement\."},
        "max_version": {"type": "string"},
        "min_version": {"type": "string"},
    }, required=["status", "title", "detail", "request_id"])}}),
    # What the authentication stage answers without credentials (keystonemiddleware's form).
    "Unauthorized": _object({"message": {"type": "string"}, "code": {"type": "string"},
                             "title": {"type": "string"}}),
    "Versions": _object({"versions": {"type": "array", "items": _object({
        "id": {"type": "string"}, "max_version": {"type": "string"},
        "min_version": {"type": "string"}, "status": {"type": "string"},
        "links": LINKS})}}),
    "ResourceClass": _object({"name": NAME, "links": LINKS}),
    "ResourceClasses": _object({"resource_classes": {
        "type": "array", "items": _ref("ResourceClass")}}),
    "Traits": _object({"traits": {"type": "array", "items": NAME}}),
    "ProviderTraits": _object({"traits": {"type": "array", "items": NAME},
                               "resource_provider_generation": {"type": "integer"}}),
    "ResourceProvider": _object({
        "uuid": UUID, "name": NAME, "generation": {"type": "integer"},
        "parent_provider_uuid": {"anyOf": [UUID, {"type": "null"}]},
        "root_provider_uuid": UUID, "links": LINKS}),
    "ResourceProviders": _object({"resource_providers": {
        "type": "array", "items": _ref("ResourceProvider")}}),
    "Inventory": _object(dict(INVENTORY["properties"],
                              resource_provider_generation={"type": "integer"})),
    "Inventories": _object({"resource_provider_generation": {"type": "integer"},
                            "inventories": _map(INVENTORY)}),
    # aggregate uuids are echoed as they were sent (hyphens optional)
    "Aggregates": _object({"aggregates": {"type": "array", "items": {"type": "string"}},
                           "resource_provider_generation": {"type": "integer"}}),
    # {} without allocations; the consumer's keys only when it has some.
    "ConsumerAllocations": _object({
        "allocations": _map(_object({"generation": {"type": "integer"},
                                     "resources": _map(COUNT)})),
        "consumer_generation": {"type": "integer"},
        "consumer_type": {"type": "string"},
        "project_id": {"type": "string"},
        "user_id": {"type": "string"},
    }, required=["allocations"]),
    "ProviderAllocations": _object({
        "allocations": _map(_object({"resources": _map(COUNT),
                                     "consumer_generation": {"type": "integer"}})),
        "resource_provider_generation": {"type": "integer"}}),
    "ProviderUsages": _object({"resource_provider_generation": {"type": "integer"},
                               "usages": _map(COUNT)}),
    # Grouped by consumer type (1.38+), each group with consumer_count.
    "Usages": _object({"usages": _map(_map(COUNT))}),
    "AllocationCandidates": _object({
        "allocation_requests": {"type": "array", "items": _object({
            "allocations": _map(_object({"resources": _map(COUNT)})),
            "mappings": _map({"type": "array", "items": UUID}),
        })},
        "provider_summaries": _map(_object({
            "resources": _map(_object({"capacity": COUNT, "used": COUNT})),
            "traits": {"type": "array", "items": NAME},
            "parent_provider_uuid": {"anyOf": [UUID, {"type": "null"}]},
            "root_provider_uuid": UUID,
        })),
    }),
}


def _op(summary, responses, body=None, query=None):
    """responses: {status: schema name or None (no body)}; body / query: the JSON
    schemas the view validates the request body / query string with."""
    return {"summary": summary, "responses": responses, "body": body, "query": query}


# (path, method) -> operation. Every route of the table must be here (see paths()).
OPERATIONS = {
    ("/", "get"): _op("Versions document", {200: "Versions"}),
    ("/resource_classes", "get"): _op("List resource classes", {200: "ResourceClasses"}),
    ("/resource_classes", "post"): _op(
        "Create a custom resource class", {201: None},
        body=resource_class_views.BODY_SCHEMA),
    ("/resource_classes/{name}", "get"): _op("Show a resource class", {200: "ResourceClass"}),
    ("/resource_classes/{name}", "put"): _op(
        "Create a custom resource class if missing", {201: None, 204: None}),
    ("/resource_classes/{name}", "delete"): _op("Delete a custom resource class", {204: None}),
    ("/traits", "get"): _op("List traits", {200: "Traits"},
                            query=trait_views.LIST_QUERY_SCHEMA),
    ("/traits/{name}", "get"): _op("Check a trait exists", {204: None}),
    ("/traits/{name}", "put"): _op("Create a custom trait if missing", {201: None, 204: None}),
    ("/traits/{name}", "delete"): _op("Delete a custom trait", {204: None}),
    ("/resource_providers", "get"): _op(
        "List resource providers", {200: "ResourceProviders"},
        query=provider_views.list_query_schema(LATEST)),
    ("/resource_providers", "post"): _op(
        "Create a resource provider", {200: "ResourceProvider"},
        body=provider_views.create_schema(LATEST)),
    ("/resource_providers/{uuid}", "get"): _op(
        "Show a resource provider", {200: "ResourceProvider"}),
    ("/resource_providers/{uuid}", "put"): _op(
        "Update a resource provider", {200: "ResourceProvider"},
        body=provider_views.update_schema(LATEST)),
    ("/resource_providers/{uuid}", "delete"): _op("Delete a resource provider", {204: None}),
    ("/resource_providers/{uuid}/inventories", "get"): _op(
        "List a provider's inventories", {200: "Inventories"}),
    ("/resource_providers/{uuid}/inventories", "post"): _op(
        "Create one inventory", {201: "Inventory"}, body=inventory_views.POST_INVENTORY_SCHEMA),
    ("/resource_providers/{uuid}/inventories", "put"): _op(
        "Replace all inventories", {200: "Inventories"},
        body=inventory_views.PUT_INVENTORIES_SCHEMA),
    ("/resource_providers/{uuid}/inventories", "delete"): _op(
        "Delete all inventories", {204: None}),
    ("/resource_providers/{uuid}/inventories/{resource_class}", "get"): _op(
        "Show one inventory", {200: "Inventory"}),
    ("/resource_providers/{uuid}/inventories/{resource_class}", "put"): _op(
        "Update one inventory", {200: "Inventory"}, body=inventory_views.BASE_INVENTORY_SCHEMA),
    ("/resource_providers/{uuid}/inventories/{resource_class}", "delete"): _op(
        "Delete one inventory", {204: None}),
    ("/resource_providers/{uuid}/aggregates", "get"): _op(
        "List a provider's aggregates", {200: "Aggregates"}),
    ("/resource_providers/{uuid}/aggregates", "put"): _op(
        "Replace a provider's aggregates", {200: "Aggregates"},
        body=aggregate_views.GENERATION_SCHEMA),
    ("/resource_providers/{uuid}/traits", "get"): _op(
        "List a provider's traits", {200: "ProviderTraits"}),
    ("/resource_providers/{uuid}/traits", "put"): _op(
        "Replace a provider's traits", {200: "ProviderTraits"},
        body=provider_trait_views.PUT_SCHEMA),
    ("/resource_providers/{uuid}/traits", "delete"): _op(
        "Remove a provider's traits", {204: None}),
    ("/resource_providers/{uuid}/allocations", "get"): _op(
        "List the allocations against a provider", {200: "ProviderAllocations"}),
    ("/resource_providers/{uuid}/usages", "get"): _op(
        "Show a provider's usages", {200: "ProviderUsages"}),
    ("/allocations", "post"): _op(
        "Replace the allocations of several consumers", {204: None},
        body=allocation_schemas.post_schema(LATEST)),
    ("/allocations/{consumer_uuid}", "get"): _op(
        "Show a consumer's allocations", {200: "ConsumerAllocations"}),
    ("/allocations/{consumer_uuid}", "put"): _op(
        "Replace a consumer's allocations", {204: None},
        body=allocation_schemas.put_schema(LATEST)),
    ("/allocations/{consumer_uuid}", "delete"): _op(
        "Delete a consumer's allocations", {204: None}),
    ("/usages", "get"): _op("Usages of a project (and user)", {200: "Usages"},
                            query=allocation_schemas.usages_schema(LATEST)),
    ("/reshaper", "post"): _op(
        "Move inventories and allocations atomically", {204: None},
        body=reshaper_schema(LATEST)),
    ("/allocation_candidates", "get"): _op(
        "Allocation candidates for a request", {200: "AllocationCandidates"},
        query=candidates_query_schema(LATEST)),
}

# Operations that create something, and where it then lives: OpenAPI links from their
# answer to every operation under that path (schemathesis' stateful phase follows them).
# (path, method, status, path of what was created, {parameter: runtime expression})
CREATES = (
    ("/resource_providers", "post", "200", "/resource_providers/{uuid}",
     {"uuid": "$response.body#/uuid"}),
    ("/resource_providers/{uuid}/inventories", "post", "201",
     "/resource_providers/{uuid}/inventories/{resource_class}",
     {"uuid": "$request.path.uuid", "resource_class": "$request.body#/resource_class"}),
    ("/resource_classes/{name}", "put", "201", "/resource_classes/{name}",
     {"name": "$request.path.name"}),
    ("/traits/{name}", "put", "201", "/traits/{name}", {"name": "$request.path.name"}),
    ("/allocations/{consumer_uuid}", "put", "204", "/allocations/{consumer_uuid}",
     {"consumer_uuid": "$request.path.consumer_uuid"}),
)

# Path parameters: the route converters' names.
PATH_PARAMETERS = {
    "uuid": UUID,
    "consumer_uuid": UUID,
    # any string: the views answer a malformed name with a 400 or a 404
    "name": {"type": "string"},
    "resource_class": {"type": "string"},
}

# Every operation takes the microversion header. The document describes the answers
# at LATEST, so its schema names only the values that ask for them; the other
# microversions are accepted as Placement accepts them (and answered as they were).
VERSION_HEADER = {
    "name": "OpenStack-API-Version", "in": "header", "required": False,
    "schema": {"type": "string", "enum": [f"placement {LATEST}", "placement latest"]},
    "description": (
        f"Placement's microversion: `placement {LATEST}` or `placement latest` for the "
        f"answers described here. `placement {microversion.MIN}` to `placement {LATEST}` "
        f"are accepted (earlier ones answer as those microversions did); without the "
        f"header the request is answered at {microversion.MIN}; an unknown version is "
        "a 406, a malformed one a 400."),
}

# "^resources(...)?$" in a query schema's patternProperties: the parameter `resources`
# and its suffixed forms (resources1, resources_NET ...), which OpenAPI cannot name.
_PATTERN_PARAMETER = re.compile(r"^\^([a-z_]+)\((.*)\)\?\$$")


def openapi_path(route):
    """"resource_providers/<str:uuid>" (a Django route) -> "/resource_providers/{uuid}"."""
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)


def routes():
    """[(OpenAPI path, [methods])] of the Placement API, from the route table."""
    found = []

    def walk(patterns, prefix):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                actions = getattr(pattern.callback, "actions", None)
                if actions is None:
                    continue  # admin, UI, static files, the catch-all 404
                # DRF adds "head" beside "get"; Placement answers HEAD with a 405
                methods = [method for method in actions if method != "head"]
                found.append((openapi_path(prefix + str(pattern.pattern)), methods))

    walk(get_resolver().url_patterns, "")
    return found


def _query_parameters(schema):
    required = set(schema.get("required", ()))
    parameters = [{"name": name, "in": "query", "required": name in required,
                   "schema": value}
                  for name, value in schema.get("properties", {}).items()]
    for pattern, value in schema.get("patternProperties", {}).items():
        match = _PATTERN_PARAMETER.match(pattern)
        parameters.append({
            "name": match.group(1), "in": "query", "required": False, "schema": value,
            "description": f"Also accepted with a suffix matching {match.group(2)} "
                           f"(a request group): query keys matching {pattern}.",
        })
    return parameters


# Every operation's error answers; a method a path does not have gets them too (405).
ERROR_RESPONSES = {
    "401": {"description": "No token",
            "content": {"application/json": {"schema": _ref("Unauthorized")}}},
    "4XX": {"description": "Placement's error body",
            "content": {"application/json": {"schema": _ref("Error")}}},
}


def _responses(operation):
    responses = {}
    for status, schema in operation["responses"].items():
        response = {"description": f"{status}"}
        if schema is not None:
            response["content"] = {"application/json": {"schema": _ref(schema)}}
        responses[str(status)] = response
    responses.update(ERROR_RESPONSES)
    return responses


def _operation_id(path, method):
    return f"{method}_{path.strip('/').replace('/', '_') or 'root'}".replace(
        "{", "").replace("}", "")


def _add_links(paths):
    for path, method, status, created, expressions in CREATES:
        links = paths[path][method]["responses"][status].setdefault("links", {})
        for target, operations in paths.items():
            parameters = re.findall(r"{(\w+)}", target)
            if target != created and not target.startswith(created + "/"):
                continue
            if not set(parameters) <= expressions.keys():
                continue  # needs something this answer does not tell
            for target_method in operations:
                links[_operation_id(target, target_method)] = {
                    "operationId": _operation_id(target, target_method),
                    "parameters": {name: expressions[name] for name in parameters},
                }


def _operation(path, method, operation):
    document = {
        "operationId": _operation_id(path, method),
        "summary": operation["summary"],
        "responses": _responses(operation),
    }
    parameters = [{"name": name, "in": "path", "required": True,
                   "schema": PATH_PARAMETERS[name]}
                  for name in re.findall(r"{(\w+)}", path)]
    if operation["query"] is not None:
        parameters += _query_parameters(operation["query"])
    document["parameters"] = parameters + [VERSION_HEADER]
    if operation["body"] is not None:
        document["requestBody"] = {"required": True, "content": {
            "application/json": {"schema": operation["body"]}}}
    if path == "/":
        document["security"] = [{}]  # the versions document needs no token
    return document


@lru_cache(maxsize=1)
def _document_text():
    return json.dumps(document(), indent=1, sort_keys=False)


def document():
    """The OpenAPI 3.1 document (a dict). KeyError if a route has no OPERATIONS entry."""
    paths = {}
    for path, methods in routes():
        paths[path] = {method: _operation(path, method, OPERATIONS[(path, method)])
                       for method in methods}
    _add_links(paths)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Placement API",
            "version": str(LATEST),
            "description": (
                f"OpenStack Placement at microversion {LATEST}. Send "
                f"`OpenStack-API-Version: placement {LATEST}` (or `latest`) and a token in "
                "`X-Auth-Token`. Every 4xx answer carries Placement's error body."),
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": paths,
        "components": {
            "schemas": RESPONSE_SCHEMAS,
            "securitySchemes": {"token": {"type": "apiKey", "in": "header",
                                          "name": "X-Auth-Token"}},
        },
        "security": [{"token": []}],
    }


def openapi_view(request):
    return HttpResponse(_document_text(), content_type="application/json")
