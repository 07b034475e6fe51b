"""The API edge: the one place that turns exceptions into Placement's error answers.

Services, selectors, rules, query grammars and the API's plumbing raise errors of one
hierarchy (foundation/domain_errors.py, each app's <app>/exceptions.py, and the
plumbing's own kinds below: content negotiation 406/415, 405): a kind, Placement's
message and code. exception_response() maps each kind to its status, and
api/errors.py writes the body; views never build error responses.
"""
import logging

from django.db import DataError, OperationalError
from django.http import Http404
from rest_framework import exceptions as drf_exceptions

from foundation import domain_errors
from foundation.api import errors

LOG = logging.getLogger(__name__)


class NotAcceptable(domain_errors.DomainError):
    """No answer in a media type the client accepts (406)."""


class UnsupportedMediaType(domain_errors.InvalidInput):
    """A body in a media type the API does not read (415)."""


class MethodNotAllowed(domain_errors.DomainError):
    """The route exists, not for this method (405, with Allow)."""


def _is_database_locked(exc):
    return "locked" in str(exc).lower() or "busy" in str(exc).lower()


# The HTTP status of each kind of error (most specific first).
DOMAIN_STATUS = (
    (UnsupportedMediaType, 415),
    (NotAcceptable, 406),
    (MethodNotAllowed, 405),
    (domain_errors.Forbidden, 403),
    (domain_errors.NotFound, 404),
    (domain_errors.Conflict, 409),
    (domain_errors.InvalidInput, 400),
)


def domain_error_status(exc):
    for kind, status in DOMAIN_STATUS:
        if isinstance(exc, kind):
            return status
    return 400


def exception_response(request, exc):
    """Map any exception raised while serving the API to a response, or None."""
    if isinstance(exc, domain_errors.DomainError):
        return errors.error_response(request, domain_error_status(exc), exc.message,
                                     code=exc.code, headers=exc.headers)
    if isinstance(exc, Http404):
        return errors.error_response(request, 404, str(exc) or "")
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return errors.error_response(
            request, 405, f"The method {request.method} is not allowed for this resource."
        )
    if isinstance(exc, drf_exceptions.APIException):
        return errors.error_response(request, exc.status_code, str(exc.detail))
    if isinstance(exc, DataError):
        # e.g. a NUL character or an out-of-range number the database refuses to store
        return errors.error_response(request, 400, f"Invalid input: {exc}")
    if isinstance(exc, OperationalError) and _is_database_locked(exc):
        # SQLite's busy timeout ran out: another writer held the lock too long.
        return errors.error_response(
            request, 409, "The database is busy with another update; please retry.",
            code=domain_errors.CONCURRENT_UPDATE,
        )
    return None


def exception_handler(exc, context):
    """DRF EXCEPTION_HANDLER."""
    request = context["request"]._request if "request" in context else None
    response = exception_response(request, exc)
    if response is None:
        return None  # let the middleware turn it into Placement's 500
    return response
