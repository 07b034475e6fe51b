"""The OpenAPI 3.1 document of the Placement API at the latest microversion
(microversion.latest(): 1.40 when an opt-in extension is on, docs/clients/extensions.md).

Roof: it reads every app's description of its operations (<app>/api/schemas.py:
OPERATIONS, RESPONSE_SCHEMAS, CREATES, written with foundation/api/openapi_parts.py)
and never an app's views. One source: paths and methods come from the route table
(placement_site/urls.py), request bodies and query parameters are the very JSON schemas
the views validate with (imported, never copied), so the document cannot drift from
validation. Only the response schemas are written by hand (the code does not validate
its answers); the test suite checks them against real responses. `python manage.py
openapi` writes it; GET /openapi.json serves it (no token).
"""
import json
import re
from functools import lru_cache

from django.conf import settings
from django.http import HttpResponse
from django.urls import URLPattern, URLResolver, get_resolver

from allocations.api import schemas as allocations_schemas
from candidates.api import schemas as candidates_schemas
from foundation.api import microversion
from foundation.api.openapi_parts import LINKS, UUID, obj, operation, ref
from foundation.ops.logs import REQUEST_ID
from providers.api import schemas as providers_schemas

LATEST = microversion.MAX   # Placement's; the document says microversion.latest()
APPS = (providers_schemas, allocations_schemas, candidates_schemas)

# The answers of the API plumbing itself: the versions document and the error bodies.
PLUMBING_RESPONSE_SCHEMAS = {
    "Error": obj({"errors": {"type": "array", "minItems": 1, "items": obj({
        "status": {"type": "integer"},
        "title": {"type": "string"},
        "detail": {"type": "string"},
        "request_id": {"type": "string", "pattern": REQUEST_ID.pattern},
        "code": {"type": "string", "pattern": r"^placement\."},
        "max_version": {"type": "string"},
        "min_version": {"type": "string"},
    }, required=["status", "title", "detail", "request_id"])}}),
    # What the authentication stage answers without credentials (keystonemiddleware's form).
    "Unauthorized": obj({"message": {"type": "string"}, "code": {"type": "string"},
                         "title": {"type": "string"}}),
    "Versions": obj({"versions": {"type": "array", "items": obj({
        "id": {"type": "string"}, "max_version": {"type": "string"},
        "min_version": {"type": "string"}, "status": {"type": "string"},
        "links": LINKS})}}),
}


def _merged(name, plumbing):
    """The plumbing's entries plus every app's `name` (a dict), refusing a key twice."""
    merged = dict(plumbing)
    for app in APPS:
        for key, value in getattr(app, name).items():
            if key in merged:
                raise ValueError(f"{app.__name__}.{name} describes {key} again")
            merged[key] = value
    return merged


RESPONSE_SCHEMAS = _merged("RESPONSE_SCHEMAS", PLUMBING_RESPONSE_SCHEMAS)
# (path, method) -> operation. Every route of the table must be here (see document()).
OPERATIONS = _merged("OPERATIONS", {("/", "get"): operation("Versions document",
                                                            {200: "Versions"})})
# Operations that create something, and where it then lives (openapi_parts.created()).
CREATES = tuple(entry for app in APPS for entry in app.CREATES)

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
def version_header(latest):
    return {
        "name": "OpenStack-API-Version", "in": "header", "required": False,
        "schema": {"type": "string", "enum": [f"placement {latest}", "placement latest"]},
        "description": (
            f"Placement's microversion: `placement {latest}` or `placement latest` for the "
            f"answers described here. `placement {microversion.MIN}` to `placement "
            f"{latest}` are accepted (earlier ones answer as those microversions did); "
            f"without the header the request is answered at {microversion.MIN}; an "
            "unknown version is a 406, a malformed one a 400."),
    }


VERSION_HEADER = version_header(LATEST)   # with the extensions off

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
            "content": {"application/json": {"schema": ref("Unauthorized")}}},
    "4XX": {"description": "Placement's error body",
            "content": {"application/json": {"schema": ref("Error")}}},
    # foundation/db_faults.py: the database down, restarting, full, or too slow
    "503": {"description": "The database is unavailable or took too long (Retry-After); "
                           "nothing applied unless the detail says the outcome is unknown",
            "content": {"application/json": {"schema": ref("Error")}}},
}


def _responses(operation):
    responses = {}
    for status, schema in operation["responses"].items():
        response = {"description": f"{status}"}
        if schema is not None:
            response["content"] = {"application/json": {"schema": ref(schema)}}
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


def _operation(path, method, operation, latest):
    document = {
        "operationId": _operation_id(path, method),
        "summary": operation["summary"],
        "responses": _responses(operation),
    }
    parameters = [{"name": name, "in": "path", "required": True,
                   "schema": PATH_PARAMETERS[name]}
                  for name in re.findall(r"{(\w+)}", path)]
    query = operation["query"]
    if callable(query):
        query = query(latest)
    if query is not None:
        parameters += _query_parameters(query)
    document["parameters"] = parameters + [version_header(latest)]
    if operation["body"] is not None:
        document["requestBody"] = {"required": True, "content": {
            "application/json": {"schema": operation["body"]}}}
    if path == "/":
        document["security"] = [{}]  # the versions document needs no token
    return document


@lru_cache(maxsize=2)
def _document_text(latest, extensions):
    """The document as served, for one setting of the opt-in extensions."""
    return json.dumps(document(), indent=1, sort_keys=False)


def document():
    """The OpenAPI 3.1 document (a dict). KeyError if a route has no OPERATIONS entry."""
    latest = microversion.latest()
    paths = {}
    for path, methods in routes():
        paths[path] = {method: _operation(path, method, OPERATIONS[(path, method)], latest)
                       for method in methods}
    _add_links(paths)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Placement API",
            "version": str(latest),
            "description": (
                f"OpenStack Placement at microversion {latest}. Send "
                f"`OpenStack-API-Version: placement {latest}` (or `latest`) and a token in "
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
    return HttpResponse(_document_text(microversion.latest(), settings.PLACEMENT_EXTENSIONS),
                        content_type="application/json")
