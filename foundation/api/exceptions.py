"""The API edge: the one place that turns exceptions into Placement's error answers.

Services, selectors, rules, query grammars and the API's plumbing raise errors of one
hierarchy (foundation/domain_errors.py, each app's <app>/exceptions.py, and the
plumbing's own kinds below: content negotiation 406/415, 405): a kind, Placement's
message and code. exception_response() maps each kind to its status, and
api/errors.py writes the body; views never build error responses.
"""
import logging

from django.db import DataError
from django.http import Http404
from rest_framework import exceptions as drf_exceptions

from foundation import db_faults, domain_errors
from foundation.api import errors

LOG = logging.getLogger(__name__)


class NotAcceptable(domain_errors.DomainError):
    """No answer in a media type the client accepts (406)."""


class UnsupportedMediaType(domain_errors.InvalidInput):
    """A body in a media type the API does not read (415)."""


class MethodNotAllowed(domain_errors.DomainError):
    """The route exists, not for this method (405, with Allow)."""


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
    database_failure = db_faults.kind(exc)
    if database_failure is not None:
        return database_failure_response(request, exc, database_failure)
    if isinstance(exc, DataError):
        # e.g. a NUL character or an out-of-range number the database refuses to store;
        # the database's own words (they can quote SQL) only in the log
        LOG.warning("database refused a value serving %s %s (%s): %s",
                    getattr(request, "method", ""), getattr(request, "path", ""),
                    getattr(request, "request_id", ""), " ".join(str(exc).split()))
        return errors.error_response(
            request, 400, "Invalid input: a value is outside what the service can store.")
    return None


RETRY_AFTER = "5"  # seconds; a restarting database or a burst is usually over by then
_UNAVAILABLE = "The database is unavailable; please retry."
_OUTCOME_UNKNOWN = ("The database connection was lost while this request was being "
                    "committed: it may or may not have been applied. Read it back before "
                    "retrying.")
_NOT_APPLIED = ("The database connection was lost while this request was being committed; "
                "it was not applied. Please retry.")
_TIMED_OUT = "The database took too long; nothing of this request was applied. Please retry."
_LOCKED = ("Another update held a lock too long; nothing of this request was applied. "
           "Please retry.")


def database_failure_response(request, exc, failure):
    """503 (409 for a lock wait) in Placement's form; the database's own words (hosts,
    ports, SQL) only in the log, under the request id."""
    LOG.warning("database %s serving %s %s (%s): %s: %s", failure,
                getattr(request, "method", ""), getattr(request, "path", ""),
                getattr(request, "request_id", ""), type(exc).__name__,
                " ".join(str(exc).split()))
    writes = getattr(request, "method", "GET") not in ("GET", "HEAD", "OPTIONS")
    if failure == db_faults.LOCK_TIMEOUT and writes:
        return errors.error_response(request, 409, _LOCKED,
                                     code=domain_errors.CONCURRENT_UPDATE)
    if failure == db_faults.LOCK_TIMEOUT:
        failure = db_faults.TIMED_OUT   # a read has no conflict to report: retry it
    outcome = db_faults.outcome(exc)
    detail = (_OUTCOME_UNKNOWN if outcome == db_faults.OUTCOME_UNKNOWN
              else _NOT_APPLIED if outcome == db_faults.NOT_APPLIED
              else _TIMED_OUT if failure == db_faults.TIMED_OUT else _UNAVAILABLE)
    return errors.error_response(request, 503, detail, headers={"Retry-After": RETRY_AFTER})


def exception_handler(exc, context):
    """DRF EXCEPTION_HANDLER."""
    request = context["request"]._request if "request" in context else None
    response = exception_response(request, exc)
    if response is None:
        return None  # let the middleware turn it into Placement's 500
    return response
