"""Cross-cutting request handling, in Placement's order (http.md §1):
request id -> CORS -> authentication -> microversion -> body framing.

Django's own pages (admin, operator UI, static files) bypass the Placement
stages after the request id, and get the browser protections of PageSecurityMiddleware.
"""
import json
import logging
import time
import uuid

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpResponse, HttpResponseBadRequest
from django.utils.cache import patch_vary_headers
from django.utils.module_loading import import_string

from foundation import front_door
from foundation.actor import acting_as
from foundation.db_faults import request_deadline
from foundation.api import auth, errors, microversion
from foundation.api.exceptions import exception_response

LOG = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-openstack-request-id"


# Paths a browser asks for on its own; no Placement route has them.
BROWSER_PATHS = ("/favicon.ico",)


def is_api_path(path):
    """False for Django's pages: under a non-API prefix, the prefix without its
    trailing slash (redirected to it), and what browsers fetch unasked."""
    if path in BROWSER_PATHS:
        return False
    return not (path.startswith(settings.PLACEMENT_NON_API_PREFIXES)
                or f"{path}/" in settings.PLACEMENT_NON_API_PREFIXES)


def is_root_path(path):
    return path in ("", "/")


class RequestIdMiddleware:
    """Give every request a fresh req-<uuid4> id and echo it on every response, which
    also gets its Content-Length (as Placement's answers do; gunicorn would send the
    refusals of the stages below chunked). The request's commit deadline starts here."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = f"req-{uuid.uuid4()}"
        # No commit after the front door has given up on the request (db_faults).
        with request_deadline(front_door.seconds_left(
                request.META, settings.PLACEMENT_COMMIT_DEADLINE, time.time())):
            response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request.request_id
        if not response.streaming and "Content-Length" not in response:
            response["Content-Length"] = str(len(response.content))
        return response


class AnyHostMiddleware:
    """The API answers whatever Host it is reached by (load balancers, container
    networks such as `placement_api:8778`); Django's host validation, which refuses
    underscores even with ALLOWED_HOSTS = *, stays for the UI and admin pages."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if is_api_path(request.path_info):
            request.get_host = request._get_raw_host
        return self.get_response(request)


class PageSecurityMiddleware:
    """Operator UI and admin pages: no framing, and scripts only from our own origin.
    (The templates still carry inline styles, hence style-src 'unsafe-inline'.)"""

    CONTENT_SECURITY_POLICY = (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; "
        "frame-ancestors 'none'")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not is_api_path(request.path_info):
            response["X-Frame-Options"] = "DENY"
            response.setdefault("Content-Security-Policy", self.CONTENT_SECURITY_POLICY)
        return response


class CorsMiddleware:
    """oslo.middleware's CORS behaviour from the [cors] options, active only when
    origins are configured. Kept in Django rather than oslo.middleware's WSGI filter:
    that one would sit outside Django and answer preflights before the request-id
    stage, while Placement's preflight answers carry x-openstack-request-id."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        origins = settings.PLACEMENT_CORS_ALLOWED_ORIGINS
        origin = request.headers.get("Origin")
        if not origins or not origin:
            return self.get_response(request)
        if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
            return self._preflight(request, origin, origins)
        response = self.get_response(request)
        if origin in origins:
            response["Access-Control-Allow-Origin"] = origin
            self._credentials(response)
            if settings.PLACEMENT_CORS_EXPOSE_HEADERS:
                response["Access-Control-Expose-Headers"] = ", ".join(
                    settings.PLACEMENT_CORS_EXPOSE_HEADERS)
            patch_vary_headers(response, ["Origin"])
        return response

    @staticmethod
    def _credentials(response):
        if settings.PLACEMENT_CORS_ALLOW_CREDENTIALS:
            response["Access-Control-Allow-Credentials"] = "true"

    def _preflight(self, request, origin, origins):
        response = HttpResponse(status=200)
        if origin not in origins:
            return response
        method = request.headers.get("Access-Control-Request-Method", "")
        if method.upper() not in {m.upper() for m in settings.PLACEMENT_CORS_ALLOW_METHODS}:
            return response
        allowed = {h.lower() for h in settings.PLACEMENT_CORS_ALLOW_HEADERS}
        asked = [h.strip() for h in request.headers.get(
            "Access-Control-Request-Headers", "").split(",") if h.strip()]
        if any(h.lower() not in allowed for h in asked):
            return response
        response["Access-Control-Allow-Origin"] = origin
        self._credentials(response)
        if settings.PLACEMENT_CORS_MAX_AGE:
            response["Access-Control-Max-Age"] = str(settings.PLACEMENT_CORS_MAX_AGE)
        response["Access-Control-Allow-Methods"] = method.upper()
        if asked:
            response["Access-Control-Allow-Headers"] = ",".join(asked)
        patch_vary_headers(response, ["Origin"])
        return response


class PlacementAuthMiddleware:
    """Build request.context (who is calling) or answer 401; in keystone mode
    keystonemiddleware's auth_token answers first (auth.keystone_refusal)."""

    # noauth2's refusal (http.md §12.1); keystone mode answers with auth_token's own.
    UNAUTHORIZED_BODY = {
        "message": "This server could not verify that you are authorized to access the "
                   "document you requested. Either you supplied the wrong credentials "
                   "(e.g., bad password), or your browser does not understand how to "
                   "supply the credentials required.",
        "code": "401 Unauthorized",
        "title": "Unauthorized",
    }

    def __init__(self, get_response):
        self.get_response = get_response
        self._auth_token = None

    def auth_token(self):
        if self._auth_token is None:
            self._auth_token = auth.keystone_auth_token()
        return self._auth_token

    def __call__(self, request):
        if not is_api_path(request.path_info):
            return self.get_response(request)
        strategy = settings.PLACEMENT_AUTH_STRATEGY
        if (strategy == "keystone" and not is_root_path(request.path_info)
                and auth.IN_PROCESS_IDENTITY not in request.META):
            try:
                refusal = auth.keystone_refusal(self.auth_token(), request)
            except Exception as exc:  # e.g. no identity endpoint of the configured interface
                LOG.exception("keystonemiddleware's auth_token failed (%s)",
                              request.request_id)
                # its words (an identity URL, a host) stay in the log
                return errors.error_response(
                    request, 500, f"Token validation failed: {type(exc).__name__}; the "
                                  f"service log has the details.")
            if refusal is not None:
                return refusal
        context = auth.authenticate(request, strategy)
        if context is None and not is_root_path(request.path_info):
            return HttpResponse(
                json.dumps(self.UNAUTHORIZED_BODY), status=401,
                content_type="application/json",
            )
        request.context = context or auth.RequestContext()
        # The change log's actor for every write this request makes (foundation.actor).
        with acting_as(request.context.user_id, request.context.project_id,
                       request.request_id):
            return self.get_response(request)


class LoginActorMiddleware:
    """The change log's actor on the operator UI and admin pages: the Django login,
    as ``ui:<login>`` or ``admin:<login>``, with the page request's id, and the project
    of a Keystone login (request.actor_project_id, set by the console's middleware).

    After AuthenticationMiddleware; the login is looked up only if the request writes.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if is_api_path(request.path_info):
            return self.get_response(request)
        where = "admin" if request.path_info.startswith("/admin/") else "ui"

        def login():
            user = getattr(request, "user", None)
            name = user.get_username() if user is not None and user.is_authenticated else ""
            return f"{where}:{name or 'anonymous'}"

        project = getattr(request, "actor_project_id", "")
        with acting_as(login, project, request_id=getattr(request, "request_id", "")):
            return self.get_response(request)


class SecureCookiesMiddleware:
    """The session and CSRF cookies of a page served over HTTPS are sent back only over
    HTTPS. request.is_secure(): TLS at the server, X-Forwarded-Proto of a proxy the
    server trusts (gunicorn's forwarded_allow_ips) or, with [oslo_middleware]
    enable_proxy_headers_parsing, of any client. Over plain HTTP (development) they stay
    usable."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.is_secure():
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
                if name in response.cookies:
                    response.cookies[name]["secure"] = True
        return response


class PageQueryMiddleware:
    """A page's query string holding a NUL character is refused, in words (400): the
    API's query strings are refused alike (viewsets.check_query_decodes); the pages'
    forms already refuse one in a field, but a search box or filter read on its own
    reached the database, where PostgreSQL answered a 500."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if front_door.query_holds_nul(request.GET):
            return HttpResponseBadRequest(
                "This address holds a NUL character (%00) in its query string; no name, "
                "uuid or number can hold one. Remove it and try again.",
                content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class PageMiddleware:
    """Django's page middleware (settings.PLACEMENT_PAGE_MIDDLEWARE: sessions, CSRF,
    logins, messages...) for Django's pages only: API requests skip the whole stack,
    which would add nothing to them and cost a trivial API request a quarter of its time.

    The stack is built as Django builds MIDDLEWARE, and its process_view hooks (the CSRF
    check) run from this middleware's, so a page sees exactly what it would as entries
    of MIDDLEWARE."""

    def __init__(self, get_response):
        self.get_response = get_response
        self._view_hooks = []
        handler = convert_exception_to_response(get_response)
        for path in reversed(settings.PLACEMENT_PAGE_MIDDLEWARE):
            middleware = import_string(path)(handler)
            if hasattr(middleware, "process_view"):
                self._view_hooks.insert(0, middleware.process_view)
            # None of Django's page middleware has these hooks; refuse one that would
            # silently go unrun.
            for hook in ("process_exception", "process_template_response"):
                if hasattr(middleware, hook):
                    raise ImproperlyConfigured(f"{path}.{hook} is not run from "
                                               "PLACEMENT_PAGE_MIDDLEWARE")
            handler = convert_exception_to_response(middleware)
        self._pages = handler

    def __call__(self, request):
        if is_api_path(request.path_info):
            return self.get_response(request)
        return self._pages(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if is_api_path(request.path_info):
            return None
        for hook in self._view_hooks:
            response = hook(request, view_func, view_args, view_kwargs)
            if response is not None:
                return response
        return None


class MicroversionMiddleware:
    """Negotiate the microversion and stamp the version headers on the answer."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_api_path(request.path_info):
            return self.get_response(request)
        header = request.META.get("HTTP_OPENSTACK_API_VERSION", "")
        try:
            request.placement_version = microversion.negotiate(header)
        except microversion.InvalidVersion as exc:
            return errors.error_response(request, 400, f"Invalid microversion: {exc}")
        except microversion.UnacceptableVersion as exc:
            return errors.error_response(
                request, 406, f"Invalid microversion: {exc}",
                extra={"max_version": str(microversion.latest()),
                       "min_version": str(microversion.MIN)},
            )
        response = self.get_response(request)
        if response.status_code != 500:
            response[microversion.HEADER] = (
                f"{microversion.SERVICE_TYPE} {request.placement_version}")
            patch_vary_headers(response, [microversion.HEADER.lower()])
        return response


class BodyFramingMiddleware:
    """Content-Length must be an integer; a body needs a Content-Type.

    Also refuses NUL characters in the path: PostgreSQL cannot store or compare them, and
    no Placement name or id may contain one (the query string: check_query_decodes).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_api_path(request.path_info):
            return self.get_response(request)
        if "\x00" in request.path:
            return errors.error_response(request, 404, "")
        length = request.META.get("CONTENT_LENGTH")
        if length not in (None, ""):
            try:
                length = int(length)
            except ValueError:
                return errors.error_response(request, 400, errors.CONTENT_LENGTH_NOT_INTEGER)
            if length > 0 and not request.META.get("CONTENT_TYPE"):
                return errors.error_response(
                    request, 400, "content-type header required when content-length > 0")
        return self.get_response(request)

    def process_exception(self, request, exc):
        """Last resort for the API: known errors in Placement form, else a JSON 500."""
        if not is_api_path(request.path_info):
            return None
        response = exception_response(request, exc)
        if response is not None:
            return response
        request_id = getattr(request, "request_id", "")
        LOG.exception("Unexpected error serving %s %s (%s)", request.method, request.path,
                      request_id)
        version = getattr(request, "placement_version", None)
        # The exception's words stay in the log: they can name hosts, ports or SQL.
        body = errors.error_body(
            500, f"Unexpected {type(exc).__name__}; the service log has the details "
                 f"under request id {request_id}.", request_id, version=version)
        return HttpResponse(json.dumps(body), status=500, content_type="application/json")
