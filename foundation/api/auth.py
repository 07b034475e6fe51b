"""Who is calling: the request context built by noauth2 or from a Keystone token.

In keystone mode keystonemiddleware's auth_token validates the token exactly as it does
in front of Placement (no delayed decision): a request without a valid token gets its
own 401, and an unreachable Keystone its own 503, which clients back off from and
monitoring counts as an outage. PlacementAuthMiddleware runs it, so that these answers
carry the request id and are measured like every other one.
"""
from dataclasses import dataclass, field

from django.conf import settings
from django.http import HttpResponse

from foundation import config


@dataclass
class RequestContext:
    """The caller's identity; policy.credentials() turns it into oslo.policy creds."""

    user_id: str | None = None
    project_id: str | None = None
    roles: list = field(default_factory=list)
    system_scope: str | None = None
    domain_id: str | None = None
    service_roles: list = field(default_factory=list)


def _split_roles(value):
    return [r.strip() for r in value.split(",") if r.strip()]


def noauth2_context(request):
    """X-Auth-Token `user[:project]`; admin is an administrator (http.md §12.1)."""
    token = request.headers.get("X-Auth-Token")
    if token is None:
        return None
    user_id, _, project_id = token.partition(":")
    project_id = project_id or user_id
    roles_header = request.headers.get("X-Roles")
    if roles_header is not None:
        roles = _split_roles(roles_header)
    else:
        roles = ["admin"] if user_id == "admin" else []
    system_scope = request.headers.get("OpenStack-System-Scope")
    if system_scope:
        project_id = None
    if request.headers.get("X-Project-Id") is not None:
        project_id = request.headers["X-Project-Id"]
    return RequestContext(
        user_id=user_id, project_id=project_id, roles=roles, system_scope=system_scope
    )


# WSGI environ key: placement_site.inprocess's callers (commands, scripts) say who they
# are here; no HTTP request can set an environ key without the HTTP_ prefix.
IN_PROCESS_IDENTITY = "placement.in_process_identity"


def keystone_context(request):
    """Identity from the token keystonemiddleware's auth_token validated (wsgi.py wraps
    the application in it). Only the WSGI environment carries it: identity headers a
    client sends are never believed (auth_token strips them anyway)."""
    in_process = request.META.get(IN_PROCESS_IDENTITY)
    if in_process is not None:
        return in_process
    token_auth = request.META.get("keystone.token_auth")
    if token_auth is None or request.META.get("HTTP_X_IDENTITY_STATUS") != "Confirmed":
        return None
    user = token_auth.user
    service = token_auth.service
    service_valid = request.META.get("HTTP_X_SERVICE_IDENTITY_STATUS") == "Confirmed"
    return RequestContext(
        user_id=user.user_id,
        project_id=user.project_id,
        roles=list(user.role_names),
        system_scope="all" if user.system_scoped else None,
        domain_id=user.domain_id,
        service_roles=list(service.role_names) if service and service_valid else [],
    )


def authenticate(request, strategy):
    if strategy == "keystone":
        return keystone_context(request)
    return noauth2_context(request)


# Set in the WSGI environ by the application auth_token guards: it let the request in.
AUTH_TOKEN_PASSED = "placement.auth_token_passed"


def _let_in(environ, start_response):
    environ[AUTH_TOKEN_PASSED] = True
    start_response("204 No Content", [])
    return []


def keystone_auth_token():
    """keystonemiddleware's auth_token configured from [keystone_authtoken], or
    config.ConfigError naming what is missing or wrong: without credentials of its own
    it could validate no token, and every request would end in a 500."""
    from keystoneauth1 import exceptions as ksa_exceptions
    from keystonemiddleware import auth_token
    from keystonemiddleware.auth_token import _exceptions as ksm_exceptions

    options = settings.CONF.keystone_authtoken
    if not options.auth_type:
        raise config.ConfigError(
            "[keystone_authtoken] auth_type: not set; auth_strategy = keystone needs the "
            "credentials Placement validates tokens with (auth_type = password, auth_url, "
            "username, password, project_name, user_domain_name, project_domain_name)")
    if options.memcached_servers:
        try:
            import memcache  # noqa: F401  (python-memcached: auth_token's token cache)
        except ImportError:
            raise config.ConfigError("[keystone_authtoken] memcached_servers: the "
                                     "python-memcached library is not installed")
    try:
        return auth_token.AuthProtocol(_let_in, {"oslo_config_config": settings.CONF})
    except (ksa_exceptions.ClientException, ksm_exceptions.ConfigurationError) as exc:
        text = " ".join(str(exc).split())
        raise config.ConfigError(f"[keystone_authtoken]: {type(exc).__name__}: {text}")


def check_at_start():
    """In keystone mode, build auth_token now: a missing or unusable
    [keystone_authtoken] stops the service with one line."""
    if settings.PLACEMENT_AUTH_STRATEGY != "keystone":
        return
    try:
        keystone_auth_token()
    except config.ConfigError as exc:
        config.stop(exc)


def keystone_refusal(auth_token, request):
    """Run auth_token on the request: None when it let the request in (the WSGI environ
    then carries the identity it validated), else its own answer (401, 503) as a Django
    response."""
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer.update(status=status, headers=headers)

    environ = request.META
    body = b"".join(auth_token(environ, start_response))
    # auth_token removed identity headers a client sent and set its own: read them anew
    request.__dict__.pop("headers", None)
    if environ.pop(AUTH_TOKEN_PASSED, False):
        return None
    response = HttpResponse(body, status=int(answer["status"].split()[0]))
    for name, value in answer["headers"]:
        response[name] = value
    return response
