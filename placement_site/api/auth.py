"""Who is calling: the request context built by noauth2 or from keystone headers."""
from dataclasses import dataclass, field


@dataclass
class RequestContext:
    user_id: str | None = None
    project_id: str | None = None
    roles: list = field(default_factory=list)
    system_scope: str | None = None
    domain_id: str | None = None
    service_roles: list = field(default_factory=list)

    @property
    def is_admin(self):
        return "admin" in (r.lower() for r in self.roles)


def _split_roles(value):
    return [r.strip() for r in value.split(",") if r.strip()]


def _first_header(headers, *names):
    for name in names:
        value = headers.get(name)
        if value is not None:
            return value
    return None


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


def keystone_context(request):
    """Identity from the headers an auth middleware (keystonemiddleware) puts in front."""
    headers = request.headers
    user_id = _first_header(headers, "X-User-Id", "X-User")
    if not user_id:
        return None
    return RequestContext(
        user_id=user_id,
        project_id=_first_header(headers, "X-Project-Id", "X-Tenant-Id", "X-Tenant"),
        roles=_split_roles(_first_header(headers, "X-Roles", "X-Role") or ""),
        system_scope=headers.get("OpenStack-System-Scope"),
        domain_id=headers.get("X-Domain-Id"),
        service_roles=_split_roles(headers.get("X-Service-Roles") or ""),
    )


def authenticate(request, strategy):
    if strategy == "keystone":
        return keystone_context(request)
    return noauth2_context(request)
