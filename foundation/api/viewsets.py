"""The base viewset every Placement endpoint derives from.

Each action is declared with @endpoint(...), which states what Placement
checks before the handler runs, in Placement's order: microversion gating
(404), Accept (406) or Content-Type (415), then the policy rule (403).
Handlers then parse their body/query with json_body()/query_params().
"""
import json
from datetime import timezone as dt_timezone
from email.utils import format_datetime
from functools import wraps
from urllib.parse import unquote_to_bytes

import jsonschema
from django.http import UnreadablePostError
from django.urls import get_script_prefix
from django.utils import timezone
from rest_framework import viewsets
from rest_framework.response import Response

from foundation.front_door import query_holds_nul
from foundation.jsonschemas import validate
from foundation.api import policy
from foundation.api.accept import accepts_json
from foundation.api.exceptions import MethodNotAllowed, NotAcceptable, UnsupportedMediaType
from foundation.domain_errors import InvalidInput, NotFound
from foundation.api.microversion import CACHE_HEADERS


def endpoint(policy_rule, min_version=None, max_version=None, accept=False,
             content_type=False, media_first=False, gate_status=404, query=False):
    """Declare an action's pre-checks. See the module docstring for the order.

    `query`: the action validates its query string, so one that is not UTF-8 is a
    400 (http.md §5.4); other actions ignore their query strings.
    """

    def decorate(handler):
        @wraps(handler)
        def wrapper(self, request, *args, **kwargs):
            version = request.version
            if media_first:
                self._check_media(request, accept, content_type)
            if not version.matches(min_version, max_version):
                if gate_status == 405:
                    raise MethodNotAllowed(
                        f"The method {request.method} is not allowed for this resource.")
                raise NotFound("The resource could not be found.")
            if not media_first:
                self._check_media(request, accept, content_type)
            if policy_rule:
                policy.authorize(request, policy_rule)
            if query:
                check_query_decodes(request)
            return handler(self, request, *args, **kwargs)

        return wrapper

    return decorate


def _forget_renderer_context(response):
    """Once rendered, a DRF Response needs no renderer context (see dispatch)."""
    response.renderer_context = None


class PlacementViewSet(viewsets.ViewSet):
    """Explicit-method viewset; the URL table passes `allow` in Placement's order."""

    allow = ""

    @property
    def default_response_headers(self):
        return {}  # DRF would add Allow to every response; Placement sends it on 405 only

    def dispatch(self, request, *args, **kwargs):
        response = super().dispatch(request, *args, **kwargs)
        # DRF leaves the response on the view, which sits in a reference cycle with its
        # request, and a DRF Response's renderer_context holds the response itself: a
        # large answer would stay in memory until the cyclic collector's next full pass,
        # long after it was sent. Without these links it is freed once sent.
        self.response = None
        if isinstance(response, Response):
            response.add_post_render_callback(_forget_renderer_context)
        return response

    # HEAD and OPTIONS are never Placement methods (CORS pre-flight is answered earlier).
    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in ("HEAD", "OPTIONS"):
            self.http_method_not_allowed(request)

    def http_method_not_allowed(self, request, *args, **kwargs):
        raise MethodNotAllowed(
            f"The method {request.method} is not allowed for this resource.",
            headers={"Allow": self.allow},
        )

    def options(self, request, *args, **kwargs):
        self.http_method_not_allowed(request)

    @staticmethod
    def _check_media(request, accept, content_type):
        if accept and not accepts_json(request.headers.get("Accept", "")):
            raise NotAcceptable("Only application/json is provided")
        if content_type:
            raw = request.META.get("CONTENT_TYPE") or ""
            media = raw.split(";")[0].strip().lower()
            if media != "application/json":
                shown = raw.split(";")[0].strip() or "None"
                raise UnsupportedMediaType(
                    f"The media type {shown} is not supported, use application/json")

    # --- request parsing ------------------------------------------------------

    @staticmethod
    def json_body(request, schema=None):
        """Decode the JSON body and validate it against `schema` (400 on failure)."""
        try:
            data = json.loads(request.body.decode("utf-8"), parse_constant=_not_json)
        # UnreadablePostError: the body ended before its Content-Length;
        # a truncated document is never applied, even when what arrived parses.
        except (ValueError, UnicodeDecodeError, RecursionError, UnreadablePostError) as exc:
            raise InvalidInput(f"Malformed JSON: {exc}")
        problem = _document_problem(data)
        if problem:
            raise InvalidInput(f"JSON does not validate: {problem}")
        if schema is not None:
            validate(data, schema, "JSON does not validate: ")
        return data

    @staticmethod
    def query_params(request, schema=None):
        """Last value of each query parameter, validated against `schema`."""
        params = {key: request.GET.getlist(key)[-1] for key in request.GET}
        if schema is not None:
            validate(params, schema, "Invalid query string parameters: ")
        return params

    # --- response helpers -----------------------------------------------------

    @staticmethod
    def href(path):
        """A link relative to where the service is mounted."""
        return get_script_prefix().rstrip("/") + path

    def location(self, request, path):
        return request.build_absolute_uri(self.href(path))

    @staticmethod
    def cache_headers(request, response, last_modified=None, omit_last_modified=False):
        """Last-Modified and Cache-Control: no-cache from 1.15 (http.md §7)."""
        if request.version < CACHE_HEADERS:
            return response
        response["Cache-Control"] = "no-cache"
        if not omit_last_modified:
            when = last_modified or timezone.now()
            response["Last-Modified"] = format_datetime(
                when.astimezone(dt_timezone.utc).replace(microsecond=0), usegmt=True)
        return response

    @staticmethod
    def no_content(status=204, headers=None):
        response = Response(status=status)
        for name, value in (headers or {}).items():
            response[name] = value
        return response


def check_query_decodes(request):
    """Refuse a query string the endpoint cannot validate: one that is not UTF-8 (Django
    would decode it with replacement characters) or holds NUL characters (no Placement name
    or id may hold one, and PostgreSQL cannot compare them). Endpoints that ignore their
    query string never call this (http.md §5.4)."""
    raw = request.META.get("QUERY_STRING", "").encode("latin-1", "replace")
    try:
        unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("Invalid query string parameters: the query string is not UTF-8")
    if query_holds_nul(request.GET):
        raise InvalidInput("Invalid query string parameters: NUL characters are not allowed")


def _not_json(constant):
    """json.loads hook: NaN and (-)Infinity are not JSON; no field can hold them."""
    raise ValueError(f"{constant} is not a valid JSON value")


# No Placement body nests more than a handful of levels; deeper documents would
# exhaust the recursion of the schema validator and its error formatting.
MAX_JSON_DEPTH = 32


def _document_problem(data):
    """Why a decoded JSON document cannot be processed, or None.

    Refused: strings (keys or values) holding NUL characters or unpaired
    surrogates (a lone "\\ud800" escape decodes to a str that cannot be encoded
    as UTF-8), which the databases cannot store, and nesting deeper than
    MAX_JSON_DEPTH.
    """
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return "NUL characters are not allowed"
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    return "unpaired surrogate characters are not allowed"
        elif isinstance(value, (dict, list)):
            if depth == MAX_JSON_DEPTH:
                return f"nested deeper than {MAX_JSON_DEPTH} levels"
            children = [*value, *value.values()] if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return None


def latest(*moments):
    """The newest of some datetimes, ignoring None; None when there are none."""
    present = [m for m in moments if m is not None]
    return max(present) if present else None
