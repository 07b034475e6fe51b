"""Check a real API response against the OpenAPI document (placement_site/openapi.py).

Used by tests/conftest.py on every response the API tests receive at the latest
microversion, so the document's response schemas are checked by the whole suite.
"""
import json
from functools import lru_cache

import jsonschema
from django.urls import Resolver404, resolve

from placement_site import openapi


@lru_cache(maxsize=1)
def _document():
    return openapi.document()


@lru_cache(maxsize=None)
def _validator(schema_name):
    document = _document()
    # "#/components/..." references resolve against this root.
    schema = {"$ref": f"#/components/schemas/{schema_name}",
              "components": document["components"]}
    return jsonschema.Draft202012Validator(schema,
                                           format_checker=jsonschema.FormatChecker())


def response_problem(method, path, response):
    """Why `response` (a Django response to METHOD path) breaks the document, or None."""
    try:
        match = resolve(path.split("?")[0])
    except Resolver404:
        return None
    if getattr(match.func, "actions", None) is None:
        return None  # not a Placement route: admin, UI, the catch-all 404
    status = response.status_code
    if method == "OPTIONS" and status == 200:
        return None  # a CORS pre-flight, answered before the API
    operations = _document()["paths"][openapi.openapi_path(match.route)]
    responses = operations.get(method.lower(), {"responses": openapi.ERROR_RESPONSES})
    responses = responses["responses"]
    spec = responses.get(str(status))
    if spec is None and 400 <= status < 500:
        spec = responses["4XX"]
    if spec is None:
        return f"{method} {path}: status {status} is not documented"
    if method == "HEAD":
        return None  # answers to HEAD carry no body
    content = _content(response)
    if "content" not in spec:
        if content:
            return f"{method} {path}: {status} must have no body, got {content[:200]}"
        return None
    content_type = response.get("Content-Type", "")
    if not content_type.startswith("application/json"):
        return f"{method} {path}: {status} is {content_type}, not application/json"
    name = spec["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    error = jsonschema.exceptions.best_match(
        _validator(name).iter_errors(json.loads(content)))
    if error is not None:
        return f"{method} {path}: {status} body does not match {name}: {error.message}"
    return None


def _content(response):
    """The body; a streamed one is read, then put back for the test to read."""
    if not response.streaming:
        return response.content
    content = b"".join(response.streaming_content)
    response.streaming_content = [content]
    return content
