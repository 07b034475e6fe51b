"""[api] auth_strategy = keystone: the WSGI application gunicorn loads (wsgi.py
build_application) behind keystonemiddleware's auth_token, tokens served by
keystonemiddleware's own test fixture (no Keystone server). Identity comes only from a
validated token; the personas of policy.md §4 under enforce_new_defaults and
enforce_scope."""
import json
import uuid

import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from keystoneauth1 import fixture as token_fixtures
from keystonemiddleware import auth_token
from keystonemiddleware.fixture import AuthTokenFixture
from webob import Request

from placement_site.wsgi import build_application
from tests.factories import make_provider

UNAUTHORIZED_START = "This server could not verify that you are authorized"
PROJECT = "d4c1f6b2a0e94e0d8c1b7e9a5f3c2b10"
KEYSTONE = "https://keystone.example.com/v3"


@pytest.fixture
def keep_test_transaction(db):
    """As Django's test client does: the test's transaction must survive the request."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def keystone(settings, keep_test_transaction):
    """The keystone-mode WSGI application, built as gunicorn loads it, and a way to mint
    tokens for it."""
    settings.PLACEMENT_AUTH_STRATEGY = "keystone"
    settings.CONF.set_override("www_authenticate_uri", KEYSTONE, group="keystone_authtoken")
    tokens = AuthTokenFixture()
    tokens.setUp()
    try:
        yield KeystoneClient(build_application(), tokens)
    finally:
        tokens.cleanUp()
        settings.CONF.clear_override("www_authenticate_uri", group="keystone_authtoken")


class KeystoneClient:
    def __init__(self, app, tokens):
        self.app = app
        self.tokens = tokens

    def token(self, *roles, project=PROJECT, scope="project"):
        token_id = uuid.uuid4().hex
        token = token_fixtures.V3Token(user_id="u-" + token_id[:8])
        if scope == "project":
            token.set_project_scope(id=project, domain_id="default")
        elif scope == "system":
            token.set_system_scope()
        else:
            token.set_domain_scope(id="default")
        for role in roles:
            token.add_role(name=role)
        self.tokens.add_token(token, token_id=token_id)
        return token_id

    def request(self, method, path, token=None, body=None, headers=None):
        request = Request.blank(path, method=method)
        request.headers["OpenStack-API-Version"] = "placement latest"
        if token:
            request.headers["X-Auth-Token"] = token
        if body is not None:
            request.body = json.dumps(body).encode()
            request.content_type = "application/json"
        for name, value in (headers or {}).items():
            request.headers[name] = value
        return request.get_response(self.app)


def assert_placement_401(response):
    assert response.status_int == 401
    assert response.content_type == "application/json"
    body = response.json
    assert body["title"] == "Unauthorized" and body["code"] == "401 Unauthorized"
    assert body["message"].startswith(UNAUTHORIZED_START)


def test_gunicorns_application_is_behind_auth_token_in_keystone_mode(keystone):
    assert isinstance(keystone.app, auth_token.AuthProtocol)
    assert isinstance(keystone.app._app, WSGIHandler)  # Django, right behind it
    # noauth2's admin token is no Keystone token: auth_token leaves the caller unknown
    assert_placement_401(keystone.request("GET", "/traits", "admin"))


def test_gunicorns_application_is_django_itself_in_noauth2_mode(
        settings, keep_test_transaction):
    settings.PLACEMENT_AUTH_STRATEGY = "noauth2"
    application = build_application()
    assert type(application) is WSGIHandler
    request = Request.blank("/traits?name=in:HW_CPU_X86_AVX2")
    request.headers.update({"X-Auth-Token": "admin",
                            "OpenStack-API-Version": "placement latest"})
    response = request.get_response(application)
    assert response.status_int == 200
    assert response.json == {"traits": ["HW_CPU_X86_AVX2"]}
    assert "WWW-Authenticate" not in response.headers


def test_a_valid_token_works(keystone):
    admin = keystone.token("admin", "member", "reader")
    assert keystone.request("GET", "/traits", admin).status_int == 200
    created = keystone.request("POST", "/resource_providers", keystone.token("service"),
                               body={"name": "cn1"})
    assert created.status_int == 200, created.body
    assert created.json["name"] == "cn1"


FORGED = {"X-User-Id": "m", "X-User": "m", "X-Roles": "admin", "X-Role": "admin",
          "X-Project-Id": PROJECT, "X-Identity-Status": "Confirmed",
          "X-Service-Roles": "service"}


@pytest.mark.parametrize("token", [None, "not-a-known-token"])
def test_forged_identity_headers_are_401_with_placements_body(keystone, token):
    response = keystone.request("POST", "/resource_providers", token, body={"name": "x"},
                                headers=FORGED)
    assert_placement_401(response)
    assert_placement_401(keystone.request("GET", "/traits", token, headers=FORGED))


def test_forged_headers_do_not_add_roles_to_a_valid_token(keystone):
    reader = keystone.token("reader")
    assert keystone.request("GET", "/traits", reader, headers=FORGED).status_int == 403


def test_the_root_document_needs_no_token(keystone):
    response = keystone.request("GET", "/")
    assert response.status_int == 200
    assert response.json["versions"][0]["id"] == "v1.0"


def test_401_tells_where_to_get_a_token(keystone):
    response = keystone.request("GET", "/traits")
    assert response.headers["WWW-Authenticate"] == f'Keystone uri="{KEYSTONE}"'


RESHAPE = "POST /reshaper"


def reshape_body(provider):
    return {"inventories": {provider.uuid: {"resource_provider_generation": 0,
                                            "inventories": {"VCPU": {"total": 4}}}},
            "allocations": {}}


# persona: roles, scope; as Keystone issues them (implied roles listed).
PERSONAS = {
    "admin": (("admin", "member", "reader"), "project"),
    "service": (("service",), "project"),
    "reader": (("reader",), "project"),
    "member": (("member",), "project"),
    "system-admin": (("admin", "member", "reader"), "system"),
    "domain-admin": (("admin", "member", "reader"), "domain"),
}


def outcome(keystone, persona, what):
    roles, scope = PERSONAS[persona]
    token = keystone.token(*roles, scope=scope)
    if what == RESHAPE:
        return keystone.request("POST", "/reshaper", token,
                                body=reshape_body(make_provider("cn"))).status_int
    return keystone.request("GET", what, token).status_int


@pytest.mark.parametrize("new_defaults, persona, what, status", [
    # policy.md §4 under enforce_new_defaults = True (Placement 16.0.0's default)
    (True, "admin", RESHAPE, 403),
    (True, "service", RESHAPE, 204),
    (True, "admin", "/resource_providers", 200),
    (True, "reader", f"/usages?project_id={PROJECT}", 200),
    (True, "reader", "/usages?project_id=other", 403),
    (True, "member", f"/usages?project_id={PROJECT}", 403),
    (True, "reader", "/resource_providers", 403),
    # legacy rules: an admin may reshape
    (False, "admin", RESHAPE, 204),
    (False, "reader", f"/usages?project_id={PROJECT}", 200),
    # enforce_scope: system- and domain-scoped tokens are refused everywhere
    (True, "system-admin", "/resource_providers", 403),
    (True, "domain-admin", "/resource_providers", 403),
    (False, "system-admin", "/resource_providers", 403),
])
def test_personas(keystone, settings, new_defaults, persona, what, status):
    settings.PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS = new_defaults
    assert outcome(keystone, persona, what) == status


@pytest.mark.parametrize("persona", ["system-admin", "domain-admin"])
def test_enforce_scope_off_lets_other_scopes_through(keystone, settings, persona):
    settings.PLACEMENT_POLICY_ENFORCE_SCOPE = False
    assert outcome(keystone, persona, "/resource_providers") == 200
