"""The body of Placement's error answers: its format, nothing else.

error_body() writes the {"errors": [...]} document and error_response() wraps it in a
response fit for the request's Accept header. Which exception gets which answer is
decided at the API edge, foundation/api/exceptions.py; the error codes live with
the domain errors that carry them (foundation/domain_errors.py). The gunicorn
worker uses error_body() too, before Django's settings exist.
"""
import json
from http import HTTPStatus

from django.http import HttpResponse
from django.utils.html import escape

from foundation.api.accept import acceptable, accepts_json
from foundation.domain_errors import DEFAULT_CODE


# Said by the API and by the gunicorn workers (gunicorn refuses such a header itself).
CONTENT_LENGTH_NOT_INTEGER = "content-length header must be an integer"

# The generic first paragraph of `detail`, as webob writes it for each status.
_EXPLANATIONS = {
    400: "The server could not comply with the request since it is either malformed "
         "or otherwise incorrect.",
    401: "This server could not verify that you are authorized to access the document "
         "you requested.",
    403: "Access was denied to this resource.",
    404: "The resource could not be found.",
    405: "The server could not comply with the request since it is either malformed "
         "or otherwise incorrect.",
    406: "The resource could not be generated that was acceptable to your user agent.",
    409: "There was a conflict when trying to complete your request.",
    413: "The body of your request was too large for this server.",
    415: "The request media type is not supported by this server.",
    500: "The server has either erred or is incapable of performing the requested "
         "operation.",
    502: "Bad gateway.",
    503: "The server is currently unavailable. Please try again at a later time.",
    504: "The gateway has timed out.",
}


def _one_line(detail):
    """Placement's WSGI layer flattens the specific message: each newline becomes a space and
    carriage returns go, so clients that show only the last line of `detail` (osc-placement)
    show the whole message."""
    return str(detail).replace("\r", "").replace("\n", " ")


def error_body(status, detail, request_id, code=None, version=None, extra=None):
    """The {"errors": [...]} document; `code` is shown only from microversion 1.23."""
    # imported here: the gunicorn worker imports this module before Django's settings
    # exist, and microversion.py's DRF versioning class needs them
    from foundation.api.microversion import ERROR_CODES

    explanation = _EXPLANATIONS.get(status, "")
    text = f"{explanation}\n\n {_one_line(detail)}  " if detail else explanation
    error = {
        "status": status,
        "title": HTTPStatus(status).phrase,
        "detail": text,
        "request_id": request_id,
    }
    if version is not None and version >= ERROR_CODES:
        error["code"] = code or DEFAULT_CODE
    if extra:
        error.update(extra)
    return {"errors": [error]}


def error_response(request, status, detail, code=None, headers=None, extra=None):
    """A Django response carrying Placement's JSON error body."""
    body = error_body(
        status,
        detail,
        getattr(request, "request_id", ""),
        code=code,
        version=getattr(request, "placement_version", None),
        extra=extra,
    )
    accept = request.headers.get("Accept", "") if request is not None else ""
    if accepts_json(accept):
        response = HttpResponse(json.dumps(body), status=status,
                                content_type="application/json")
    else:
        # A client that refuses JSON gets the error as HTML or text (http.md §6.4).
        error = body["errors"][0]
        text = f"{status} {error['title']}\n\n{error['detail']}"
        if acceptable(accept, "text/html"):
            response = HttpResponse(f"<html><body><h1>{escape(text)}</h1></body></html>",
                                    status=status, content_type="text/html; charset=UTF-8")
        else:
            response = HttpResponse(text, status=status, content_type="text/plain; charset=UTF-8")
    for name, value in (headers or {}).items():
        response[name] = value
    response.placement_error_code = code or DEFAULT_CODE  # for metrics (409s by code)
    return response
