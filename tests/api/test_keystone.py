"""[api] auth_strategy = keystone: the WSGI application gunicorn loads (wsgi.py
build_application), keystonemiddleware's auth_token run by PlacementAuthMiddleware,
tokens served by keystonemiddleware's own test fixture (tests/keystone has a real
Keystone). Identity comes only from a validated token; auth_token's own 401 and 503 as
in front of Placement; the personas of policy.md §4 under enforce_new_defaults, with
oslo.policy's scope checks."""
import json
import os
import socket
import subprocess
import sys
import uuid
from contextlib import contextmanager
from unittest import mock

import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from keystoneauth1 import fixture as token_fixtures
from keystoneauth1 import loading
from keystoneauth1.exceptions import EndpointNotFound
from keystonemiddleware import auth_token
from keystonemiddleware.fixture import AuthTokenFixture
from webob import Request

from placement_site.wsgi import build_application
from tests.factories import make_provider

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
    tokens = AuthTokenFixture()
    tokens.setUp()
    try:
        with authtoken_options(settings):
            yield KeystoneClient(build_application(), tokens)
    finally:
        tokens.cleanUp()


@contextmanager
def authtoken_options(settings, **options):
    """[keystone_authtoken] as a deployment writes it: the credentials Placement
    validates tokens with, and where clients get theirs."""
    options = {"www_authenticate_uri": KEYSTONE, "auth_url": KEYSTONE,
               "auth_type": "password", "username": "placement", "password": "secret",
               "project_name": "service", "user_domain_name": "Default",
               "project_domain_name": "Default", **options}
    # auth_token registers the options of its auth_type itself when it loads the plugin
    settings.CONF.register_opts(loading.get_auth_plugin_conf_options("password"),
                                group="keystone_authtoken")
    for name, value in options.items():
        settings.CONF.set_override(name, value, group="keystone_authtoken")
    try:
        yield
    finally:
        for name in options:
            settings.CONF.clear_override(name, group="keystone_authtoken")


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


# Placement's 401 behind keystonemiddleware: auth_token's own body.
KEYSTONE_401 = {"error": {"code": 401, "title": "Unauthorized",
                          "message": "The request you have made requires authentication."}}


def assert_placement_401(response):
    assert response.status_int == 401
    assert response.content_type == "application/json"
    assert response.json == KEYSTONE_401
    assert response.headers["WWW-Authenticate"] == f'Keystone uri="{KEYSTONE}"'
    assert response.headers["x-openstack-request-id"].startswith("req-")
    assert "OpenStack-API-Version" not in response.headers


def test_auth_token_refuses_with_its_own_401(keystone):
    assert type(keystone.app) is WSGIHandler  # auth_token runs inside Django
    # noauth2's admin token is no Keystone token
    assert_placement_401(keystone.request("GET", "/traits", "admin"))
    assert_placement_401(keystone.request("GET", "/traits"))


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


def test_operator_pages_need_no_keystone_token(keystone):
    """/admin/ and /ui/ log in with Django's sessions, not Keystone tokens."""
    response = keystone.request("GET", "/admin/")
    assert response.status_int == 302
    assert response.headers["Location"].startswith("/admin/login/")


def test_a_failing_auth_token_is_placements_json_500(keystone):
    """auth_token lets an error it does not expect through (no identity endpoint of the
    configured interface in the catalog): a JSON 500 that names it, not an HTML page."""
    no_endpoint = EndpointNotFound("internal endpoint for identity service not found")
    # undone right here: the token fixture's own patch of fetch_token is undone after
    with mock.patch.object(auth_token.AuthProtocol, "fetch_token", side_effect=no_endpoint):
        response = keystone.request("GET", "/traits", uuid.uuid4().hex)
    assert response.status_int == 500
    detail = response.json["errors"][0]["detail"]
    assert "EndpointNotFound; the service log has the details" in detail  # no internals


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("accept, content_type", [
    ("application/json", "application/json"), ("text/plain", "text/plain")])
def test_keystone_unreachable_is_503_not_401(settings, keep_test_transaction, accept,
                                             content_type):
    """No Keystone listens at auth_url: auth_token cannot validate the token and answers
    503 (clients back off, monitoring sees an outage), as in front of Placement."""
    settings.PLACEMENT_AUTH_STRATEGY = "keystone"
    with authtoken_options(settings, auth_url=f"http://127.0.0.1:{free_port()}/v3",
                           http_connect_timeout=2, http_request_max_retries=0):
        client = KeystoneClient(build_application(), tokens=None)
        response = client.request("GET", "/traits", uuid.uuid4().hex,
                                  headers={"Accept": accept})
    assert response.status_int == 503
    assert response.content_type == content_type
    assert "The Keystone service is temporarily unavailable." in response.text
    if content_type == "application/json":
        assert response.json["title"] == "Service Unavailable"
        assert response.json["code"] == "503 Service Unavailable"
    assert response.headers["x-openstack-request-id"].startswith("req-")


def start_with(environ):
    """Import the WSGI application as gunicorn's workers do, in a fresh process."""
    return subprocess.run(
        [sys.executable, "-c", "import placement_site.wsgi"], capture_output=True,
        text=True, timeout=120,
        env={**environ, "PLACEMENT_AUTH_STRATEGY": "keystone"})


@pytest.mark.parametrize("conf, message", [
    ("", "[keystone_authtoken] auth_type: not set"),
    ("[keystone_authtoken]\nauth_type = passwd\n",
     "[keystone_authtoken]: NoMatchingPlugin"),
    ("[keystone_authtoken]\nauth_type = password\nusername = placement\n",
     "[keystone_authtoken]: MissingRequiredOptions"),
])
def test_keystone_mode_without_usable_authtoken_options_does_not_start(
        tmp_path, conf, message):
    path = tmp_path / "placement.conf"
    path.write_text(conf)
    environ = {name: value for name, value in os.environ.items()
               if not name.startswith(("PLACEMENT_", "DJANGO_"))}
    started = start_with({**environ, "PLACEMENT_CONFIG_FILE": str(path),
                          "PLACEMENT_DATA_DIR": str(tmp_path)})
    assert started.returncode == 4, started.stderr
    assert "Traceback" not in started.stderr
    last = started.stderr.strip().splitlines()[-1]  # after auth_token's own log lines
    assert last.startswith("placement: configuration error: ") and message in last


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
    # oslo.policy's scope check: system- and domain-scoped tokens are refused everywhere
    (True, "system-admin", "/resource_providers", 403),
    (True, "domain-admin", "/resource_providers", 403),
    (False, "system-admin", "/resource_providers", 403),
    (False, "domain-admin", "/resource_providers", 403),
])
def test_personas(keystone, settings, new_defaults, persona, what, status):
    settings.PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS = new_defaults
    assert outcome(keystone, persona, what) == status
