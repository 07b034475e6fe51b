"""Logging in to the console (and the admin) with Keystone credentials, when
[api] auth_strategy = keystone.

The login form asks Keystone for a project-scoped token through keystoneauth1: a user's
password, or an application credential. The session keeps what policy needs of the
token (user, project, roles, scope) and ends when the token does. The operator is a
Django user named `keystone:<user name>@<domain>`, staff so the admin lets them in, with
no password of their own: KeystoneBackend answers every permission the admin asks with
the API's policy (console/door.py), so the admin follows the same rules as the pages.
"""
import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model, logout
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from console import door
from foundation.api.auth import RequestContext

LOG = logging.getLogger(__name__)
SESSION_KEY = "console_keystone"
TIMEOUT = 10   # seconds for one call to Keystone


@dataclass(frozen=True)
class Identity:
    """What the console keeps of a Keystone token (never the token itself is needed
    again: the console calls the services in-process)."""

    user_id: str
    user_name: str
    domain_name: str
    project_id: str | None
    project_name: str | None
    roles: list = field(default_factory=list)
    expires_at: str = ""    # ISO 8601, UTC
    system_scope: str | None = None
    domain_id: str | None = None

    def context(self):
        return RequestContext(user_id=self.user_id, project_id=self.project_id,
                              roles=list(self.roles), system_scope=self.system_scope,
                              domain_id=self.domain_id)

    def expired(self, now=None):
        now = now or datetime.now(timezone.utc)
        return not self.expires_at or datetime.fromisoformat(self.expires_at) <= now

    @property
    def username(self):
        return f"keystone:{self.user_name}@{self.domain_name}"[:150]


class KeystoneUnavailable(Exception):
    """Keystone did not answer (or not as Keystone)."""


def keystone_url():
    """The Keystone the operators authenticate against: [keystone_authtoken]
    www_authenticate_uri, else its auth_url."""
    options = settings.CONF.keystone_authtoken
    for name in ("www_authenticate_uri", "auth_url"):
        try:
            value = getattr(options, name)
        except Exception:   # an option of the auth plugin not registered (yet)
            value = None
        if value:
            return value
    return None


def _auth_plugin(url, credentials):
    from keystoneauth1.identity import v3

    if credentials.get("application_credential_id"):
        return v3.ApplicationCredential(
            auth_url=url,
            application_credential_id=credentials["application_credential_id"],
            application_credential_secret=credentials["application_credential_secret"])
    return v3.Password(
        auth_url=url, username=credentials["username"], password=credentials["password"],
        user_domain_name=credentials.get("user_domain_name") or "Default",
        project_name=credentials["project_name"],
        project_domain_name=credentials.get("project_domain_name") or "Default")


def authenticate_with_keystone(credentials):
    """The Identity of a fresh token for `credentials`, None when Keystone refuses them;
    KeystoneUnavailable when it cannot be asked."""
    from keystoneauth1 import exceptions, session

    url = keystone_url()
    if not url:
        raise KeystoneUnavailable("[keystone_authtoken] www_authenticate_uri is not set")
    try:
        access = _auth_plugin(url, credentials).get_access(
            session.Session(timeout=TIMEOUT))
    except (exceptions.Unauthorized, exceptions.Forbidden, exceptions.NotFound,
            exceptions.BadRequest):
        return None
    except exceptions.ClientException as exc:
        raise KeystoneUnavailable(f"Keystone at {url}: {type(exc).__name__}") from exc
    expires = access.expires
    return Identity(
        user_id=access.user_id, user_name=access.username,
        domain_name=access.user_domain_name or "Default",
        project_id=access.project_id, project_name=access.project_name,
        roles=sorted(access.role_names), system_scope="all" if access.system_scoped else None,
        domain_id=access.domain_id,
        expires_at=(expires.astimezone(timezone.utc).isoformat() if expires else ""))


class KeystoneLoginForm(forms.Form):
    """A Keystone user's password on a project, or an application credential."""

    username = forms.CharField(required=False, max_length=255,
                               widget=forms.TextInput(attrs={"autofocus": True,
                                                             "autocomplete": "username"}))
    password = forms.CharField(required=False, strip=False,
                               widget=forms.PasswordInput(
                                   attrs={"autocomplete": "current-password"}))
    user_domain_name = forms.CharField(label="User domain", required=False, initial="Default")
    project_name = forms.CharField(label="Project", required=False)
    project_domain_name = forms.CharField(label="Project domain", required=False,
                                          initial="Default")
    application_credential_id = forms.CharField(
        label="Or: application credential id", required=False)
    application_credential_secret = forms.CharField(
        label="Application credential secret", required=False, strip=False,
        widget=forms.PasswordInput)

    def __init__(self, request=None, *args, **kwargs):
        self.request = request
        self.user_cache = None
        super().__init__(*args, **kwargs)

    def clean(self):
        data = super().clean()
        by_credential = bool(data.get("application_credential_id"))
        if by_credential and not data.get("application_credential_secret"):
            raise forms.ValidationError("Enter the application credential's secret.")
        if not by_credential and not (data.get("username") and data.get("password")
                                      and data.get("project_name")):
            raise forms.ValidationError(
                "Enter a user name, password and project, or an application credential.")
        try:
            identity = authenticate_with_keystone(data)
        except KeystoneUnavailable as exc:
            LOG.warning("console login: %s", exc)
            raise forms.ValidationError(
                "Keystone cannot be reached to check these credentials; try again later.")
        if identity is None or identity.expired():
            raise forms.ValidationError("Keystone refused these credentials.")
        self.user_cache = _operator(identity)
        return data

    def get_user(self):
        return self.user_cache


def _operator(identity):
    """The Django user standing for a Keystone identity (created at the first login)."""
    user, _ = get_user_model().objects.get_or_create(
        username=identity.username,
        defaults={"is_staff": True, "first_name": identity.user_name[:150]})
    if user.has_usable_password():
        user.set_unusable_password()
        user.save(update_fields=["password"])
    user.backend = "console.keystone.KeystoneBackend"
    user.keystone = identity
    return user


@receiver(user_logged_in)
def _keep_identity(sender, request, user, **kwargs):
    identity = getattr(user, "keystone", None)
    if identity is not None and request is not None:
        request.session[SESSION_KEY] = asdict(identity)
        # the session ends when the token does
        request.session.set_expiry(datetime.fromisoformat(identity.expires_at))


class KeystoneSessionMiddleware:
    """After AuthenticationMiddleware: the logged-in operator's Identity on request.user
    (door and KeystoneBackend read it there), or a logout once the token has expired."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        kept = request.session.get(SESSION_KEY) if hasattr(request, "session") else None
        if kept is not None:
            identity = Identity(**kept)
            if identity.expired():
                logout(request)
            elif request.user.is_authenticated:
                request.user.keystone = identity
                request.actor_project_id = identity.project_id or ""
        return self.get_response(request)


def _every_change(rule, delete=None):
    return {"add": rule, "change": rule, "delete": delete or rule}


# The admin's permissions (app_label.codename) as the API operations they stand for.
_MODEL_RULES = {
    "providers.resourceprovider": {"add": "placement:resource_providers:create",
                                   "change": door.UPDATE_PROVIDER,
                                   "delete": "placement:resource_providers:delete"},
    "providers.inventory": _every_change(door.UPDATE_INVENTORY, door.DELETE_INVENTORY),
    "providers.providertrait": _every_change(door.UPDATE_PROVIDER_TRAITS),
    "providers.provideraggregate": _every_change(door.UPDATE_AGGREGATES),
    "providers.aggregate": {"add": door.UPDATE_AGGREGATES},
    "providers.resourceclass": {"add": door.CREATE_RESOURCE_CLASS,
                                "change": "placement:resource_classes:update",
                                "delete": door.DELETE_RESOURCE_CLASS},
    "providers.trait": {"add": door.UPDATE_TRAIT, "delete": door.DELETE_TRAIT},
    "providers.changerecord": {},
    "allocations.consumer": _every_change(door.UPDATE_ALLOCATIONS, door.DELETE_ALLOCATIONS),
    "allocations.allocation": _every_change(door.UPDATE_ALLOCATIONS, door.DELETE_ALLOCATIONS),
    "allocations.project": {}, "allocations.user": {}, "allocations.consumertype": {},
}


def _permission_rule(perm):
    """(rule, write) of a Django permission, or None for one no API operation grants."""
    app_label, _, codename = perm.partition(".")
    action, _, model = codename.partition("_")
    rules = _MODEL_RULES.get(f"{app_label}.{model}")
    if rules is None:
        return None
    if action == "view":
        return door.SHOW_PROVIDER, False
    rule = rules.get(action)
    return (rule, True) if rule else None


class KeystoneBackend:
    """Django's authentication backend for Keystone operators: no local credentials
    (KeystoneLoginForm logs them in), and every permission decided by the API's policy."""

    def authenticate(self, request, **credentials):
        return None   # only KeystoneLoginForm logs a Keystone operator in

    def get_user(self, user_id):
        user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
        return user if user is not None and user.username.startswith("keystone:") else None

    def has_perm(self, user_obj, perm, obj=None):
        identity = getattr(user_obj, "keystone", None)
        found = _permission_rule(perm)
        if identity is None or found is None:
            return False
        rule, write = found
        return door.allowed_by_policy(identity, rule, write=write)

    def has_module_perms(self, user_obj, app_label):
        return any(self.has_perm(user_obj, perm) for perm in _permissions(app_label)
                   if ".view_" in perm)

    def get_all_permissions(self, user_obj, obj=None):
        return {perm for perm in _permissions() if self.has_perm(user_obj, perm)}


def _permissions(app_label=None):
    """Every permission _MODEL_RULES knows (of one app, when given)."""
    for label, rules in _MODEL_RULES.items():
        app, model = label.split(".")
        if app_label in (None, app):
            yield from (f"{app}.{action}_{model}" for action in ("view", *rules))
