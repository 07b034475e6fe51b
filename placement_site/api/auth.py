"""Who is calling: the request context built by noauth2 or from a Keystone token."""
from dataclasses import dataclass, field


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
