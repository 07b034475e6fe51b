"""The API edge: the one place that turns exceptions into Placement's error answers.

Services, selectors, rules and query grammars raise domain errors
(placement_site/domain_errors.py and each app's <app>/exceptions.py: a kind,
Placement's message and code); exception_response() maps each kind to its status,
and api/errors.py writes the body. The PlacementError classes here are raised only
by the API plumbing itself (body and query validation, microversion gating, content
negotiation 406/415, 405, policy 403); views never build error responses.
"""
import logging

from django.db import DataError, OperationalError
from django.http import Http404
from rest_framework import exceptions as drf_exceptions

from placement_site import domain_errors
from placement_site.api import errors

LOG = logging.getLogger(__name__)


class PlacementError(Exception):
    """Base for errors that map to one HTTP status and one Placement code."""

    status = 400
    code = domain_errors.DEFAULT_CODE

    def __init__(self, detail="", code=None, status=None, headers=None):
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        self.headers = headers or {}


class BadRequest(PlacementError):
    status = 400


class NotFound(PlacementError):
    status = 404


class Forbidden(PlacementError):
    status = 403


class NotAcceptable(PlacementError):
    status = 406


class UnsupportedMediaType(PlacementError):
    status = 415


class MethodNotAllowed(PlacementError):
    status = 405


def _is_database_locked(exc):
    return "locked" in str(exc).lower() or "busy" in str(exc).lower()


# The HTTP status of each kind of domain error (most specific first).
DOMAIN_STATUS = (
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
        return errors.error_response(
            request, domain_error_status(exc), exc.message, code=exc.code)
    if isinstance(exc, PlacementError):
        return errors.error_response(
            request, exc.status, exc.detail, code=exc.code, headers=exc.headers
        )
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
