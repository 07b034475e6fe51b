"""The console's one door: every page declares what it reads and what it writes, as the
oslo.policy rules of the API operations it performs, and one place decides.

    @door(read=SHOW_PROVIDER, write=UPDATE_INVENTORY)
    def provider_edit(request, uuid, section): ...

Who decides depends on how the operator logged in:

* **Keystone** ([api] auth_strategy = keystone; console/keystone.py): the session holds
  the operator's token, and the API's policy decides with its roles, the operator's
  policy file included, exactly as for the API call the page stands for. Reading also
  passes `placement:console:read` (default `role:reader`): Placement's defaults let
  only administrators and services read the API, yet a cloud's readers should see the
  console. An operator who wants the console to follow the API's read rules alone sets
  it to "!" in the policy file.
* **Local accounts** (noauth2, development): any active staff account reads (others are
  sent to the login page, as the admin sends them); Django permissions decide writes (PERMISSIONS: the permission of each write rule). The
  groups "Placement readers" and "Placement operators" ship with the console
  (console/migrations), and a superuser may do everything.

Anonymous visitors are sent to the login page. A refusal is a 403 page, before the view
runs: nothing is written.
"""
from dataclasses import dataclass
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed
from oslo_policy import policy as oslo

from foundation.api import policy

# The API operations the console performs (foundation/api/policy.py names them all).
LIST_PROVIDERS = "placement:resource_providers:list"
SHOW_PROVIDER = "placement:resource_providers:show"
UPDATE_PROVIDER = "placement:resource_providers:update"
UPDATE_INVENTORY = "placement:resource_providers:inventories:update"
DELETE_INVENTORY = "placement:resource_providers:inventories:delete"
UPDATE_PROVIDER_TRAITS = "placement:resource_providers:traits:update"
UPDATE_AGGREGATES = "placement:resource_providers:aggregates:update"
PROVIDER_USAGES = "placement:resource_providers:usages"
PROVIDER_ALLOCATIONS = "placement:resource_providers:allocations:list"
LIST_RESOURCE_CLASSES = "placement:resource_classes:list"
CREATE_RESOURCE_CLASS = "placement:resource_classes:create"
DELETE_RESOURCE_CLASS = "placement:resource_classes:delete"
LIST_TRAITS = "placement:traits:list"
UPDATE_TRAIT = "placement:traits:update"
DELETE_TRAIT = "placement:traits:delete"
USAGES = "placement:usages"
LIST_ALLOCATIONS = "placement:allocations:list"
UPDATE_ALLOCATIONS = "placement:allocations:update"
DELETE_ALLOCATIONS = "placement:allocations:delete"
CANDIDATES = "placement:allocation_candidates:list"

# The console's own rule: what lets a reader see every page (see the module doc).
CONSOLE_READ = "placement:console:read"
CONSOLE_RULES = [
    oslo.RuleDefault(
        CONSOLE_READ, "role:reader",
        description="Read every page of the operator console (/ui/), besides the rule of "
                    "the API operation each page stands for. '!' makes the console follow "
                    "the API's read rules alone."),
]

# Local accounts: the Django permission each write rule needs.
PERMISSIONS = {
    UPDATE_PROVIDER: "providers.change_resourceprovider",
    UPDATE_INVENTORY: "providers.change_inventory",
    DELETE_INVENTORY: "providers.delete_inventory",
    UPDATE_PROVIDER_TRAITS: "providers.change_providertrait",
    UPDATE_AGGREGATES: "providers.change_provideraggregate",
    CREATE_RESOURCE_CLASS: "providers.add_resourceclass",
    DELETE_RESOURCE_CLASS: "providers.delete_resourceclass",
    UPDATE_TRAIT: "providers.add_trait",
    DELETE_TRAIT: "providers.delete_trait",
    UPDATE_ALLOCATIONS: "allocations.change_allocation",
    DELETE_ALLOCATIONS: "allocations.delete_allocation",
}
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class Need:
    """What a view declares: the rule a read needs, and the rule a write needs (a rule,
    or a callable(request, **view kwargs) -> rule for a view whose write depends on what
    it writes; None: the view never writes). post_reads: a POST that only reads (a long
    query posted instead of put in the URL)."""

    read: str
    write: object = None
    post_reads: bool = False

    def writes(self, request):
        """Does this request write (a POST that only reads does not)?"""
        return request.method in WRITE_METHODS and not self.post_reads

    def rule(self, request, kwargs):
        """The rule this request needs, or None for a write the view does not take."""
        if not self.writes(request):
            return self.read
        return self.write(request, **kwargs) if callable(self.write) else self.write


def door(*, read, write=None, post_reads=False):
    """Declare what a console view needs, and let only those it allows through."""
    need = Need(read, write, post_reads)

    def decorate(view):
        @wraps(view)
        def guarded(request, *args, **kwargs):
            user = request.user
            if not (user.is_authenticated and user.is_active and user.is_staff):
                # as the admin does: the login page, which says who is logged in
                return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
            rule = need.rule(request, kwargs)
            if rule is None:
                return HttpResponseNotAllowed(["GET", "HEAD"])
            if not allows(request, rule, write=need.writes(request)):
                raise PermissionDenied(f"Policy does not allow {rule} to be performed.")
            request.console_need = need
            return view(request, *args, **kwargs)

        guarded.console_need = need
        return guarded

    return decorate


def allows(request, rule, *, write):
    """May the logged-in operator of `request` perform `rule`?"""
    identity = getattr(request.user, "keystone", None)
    if identity is not None:
        return allowed_by_policy(identity, rule, write=write)
    if not write:
        return True
    permission = PERMISSIONS.get(rule)   # a write no permission grants is refused
    return permission is not None and request.user.has_perm(permission)


def allowed_by_policy(identity, rule, *, write):
    """The API's policy decision for a Keystone identity (console/keystone.Identity)."""
    context = identity.context()
    target = {"project_id": context.project_id, "user_id": context.user_id}
    credentials = policy.credentials(context)
    enforcer = policy.enforcer()
    try:
        if enforcer.decide(rule, target, credentials):
            return True
        return not write and enforcer.decide(CONSOLE_READ, target, credentials)
    except oslo.InvalidScope:   # a system- or domain-scoped token: as the API refuses it
        return False

