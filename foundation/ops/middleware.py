"""The outermost middleware: answers the public operator endpoints itself, and
measures and logs every other request.

The operator endpoints (metrics here; health and the OpenAPI document, the project's views,
named in settings.PLACEMENT_OPERATOR_ENDPOINTS) are never measured nor logged (probes
come every few seconds). The public ones ([django] public_paths) are answered before any
Placement stage runs: no token, no microversion. The others are answered by
OperatorEndpointMiddleware, right after authentication, to administrators only. Every
other request is timed, its database queries counted, and it is recorded under its
route template (the URL pattern it resolved to, never the raw path).
"""
import time

from django.conf import settings
from django.db import connection
from django.urls import Resolver404, resolve
from django.utils.module_loading import import_string

from foundation.api import policy
from foundation.api.exceptions import exception_response
from foundation.domain_errors import Forbidden
from foundation.ops import logs, metrics

UNMATCHED_ROUTE = "unmatched"
UNMATCHED_URL_NAME = "unmatched"  # the name of urls.py's catch-all 404 route
KNOWN_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))


class QueryTally:
    """A connection.execute_wrapper counting queries and the time spent in them."""

    __slots__ = ("count", "seconds")

    def __init__(self):
        self.count = 0
        self.seconds = 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.count += 1
            self.seconds += time.perf_counter() - started


def route_template(request):
    """"/resource_providers/<str:uuid>" for /resource_providers/1b2c...; requests
    answered by a middleware before URL resolution are resolved here."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return UNMATCHED_ROUTE
    if match.url_name == UNMATCHED_URL_NAME:
        return UNMATCHED_ROUTE
    return "/" + match.route


def operator_endpoints():
    """path -> view of every operator endpoint. The project's views are looked up by name
    (settings.PLACEMENT_OPERATOR_ENDPOINTS): they look into the apps, which the
    foundation does not import."""
    endpoints = {path: import_string(view)
                 for path, view in settings.PLACEMENT_OPERATOR_ENDPOINTS.items()}
    endpoints[settings.PLACEMENT_METRICS_PATH] = metrics.metrics_view
    return endpoints


class OperatorEndpointMiddleware:
    """The operator endpoints that are not public: after authentication (a token is
    needed, as for every Placement path), for administrators (policy rule admin_api)."""

    RULE = "admin_api"

    def __init__(self, get_response):
        self.get_response = get_response
        self.endpoints = operator_endpoints()

    def __call__(self, request):
        endpoint = self.endpoints.get(request.path_info)
        if endpoint is None:
            return self.get_response(request)
        try:
            policy.authorize(request, self.RULE)
        except Forbidden as exc:
            return exception_response(request, exc)
        return endpoint(request)


class ObservabilityMiddleware:

    def __init__(self, get_response):
        self.get_response = get_response
        self.operator_endpoints = operator_endpoints()

    def __call__(self, request):
        endpoint = self.operator_endpoints.get(request.path_info)
        if endpoint is not None:
            if request.path_info in settings.PLACEMENT_PUBLIC_PATHS:
                return endpoint(request)
            return self.get_response(request)  # OperatorEndpointMiddleware's
        started = time.perf_counter()
        queries = QueryTally()
        metrics.WORKER_REQUESTS_IN_PROGRESS.inc()
        try:
            with connection.execute_wrapper(queries):
                response = self.get_response(request)
        finally:
            metrics.WORKER_REQUESTS_IN_PROGRESS.dec()
        seconds = time.perf_counter() - started
        route = route_template(request)
        method = request.method if request.method in KNOWN_METHODS else "other"
        status = str(response.status_code)
        version = getattr(request, "placement_version", None)
        microversion = str(version) if version is not None else "none"
        metrics.observe_request(
            route, method, status, microversion, seconds, queries.count, queries.seconds,
            error_code=getattr(response, "placement_error_code", None))
        logs.log_request(request, route=route, status=status, microversion=microversion,
                         seconds=seconds, db_queries=queries.count,
                         db_seconds=queries.seconds)
        return response
