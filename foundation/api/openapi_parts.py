"""The words each app describes its API operations with, for the OpenAPI document.

Foundation: each app's api/schemas.py uses these to say, per (path, method), what the
operation takes (the very JSON schemas its views validate with) and answers (response
schemas written here, as the code does not validate its answers). The project,
placement_site/openapi.py, reads every app's description and assembles the
document; nothing here knows an app.
"""
UUID = {"type": "string", "format": "uuid"}
NAME = {"type": "string"}
COUNT = {"type": "integer", "minimum": 0}
LINKS = {"type": "array", "items": {
    "type": "object", "properties": {"rel": {"type": "string"}, "href": {"type": "string"}},
    "required": ["rel", "href"], "additionalProperties": False}}


def obj(properties, required=None, additional=False):
    """A JSON object with these properties (all required unless `required` says)."""
    return {"type": "object", "properties": properties,
            "required": list(properties) if required is None else required,
            "additionalProperties": additional}


def mapping(values):
    """A JSON object whose keys are names or uuids and whose values are `values`."""
    return {"type": "object", "additionalProperties": values}


def ref(name):
    """A reference to the response schema `name` of the document's components."""
    return {"$ref": f"#/components/schemas/{name}"}


def operation(summary, responses, body=None, query=None):
    """One operation. responses: {status: response schema name or None (no body)};
    body / query: the JSON schemas the view validates the request body / query with
    (query: or a function of the latest microversion, for a schema the opt-in
    extensions change)."""
    return {"summary": summary, "responses": responses, "body": body, "query": query}


def created(path, method, status, location, parameters):
    """An operation creates something that then lives at `location`; `parameters`
    ({name: runtime expression}) fill its path. The document links the answer to every
    operation under `location` (schemathesis' stateful phase follows the links)."""
    return (path, method, status, location, parameters)
