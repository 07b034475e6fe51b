"""Keystone mode against a real Keystone: its tokens, the personas' roles on a few
representative routes under the new and the legacy policy defaults, Keystone down
(503, as in front of Placement) and back, and the token cache shared through memcached.
"""
import uuid

import pytest

from tests.keystone.conftest import PROJECT, call

KEYSTONE_401 = {"error": {"code": 401, "title": "Unauthorized",
                          "message": "The request you have made requires authentication."}}

# persona: (user, scope) as Keystone issues its token
PERSONAS = {
    "admin": ("alice", ("project", PROJECT)),
    "service": ("nova", ("project", PROJECT)),
    "reader": ("rita", ("project", PROJECT)),
    "member": ("mike", ("project", PROJECT)),
    "system-admin": ("admin", ("system", None)),
    "domain-admin": ("alice", ("domain", "default")),
}

PROVIDERS = ("GET", "/resource_providers")
OWN_USAGES = ("GET", f"/usages?project_id={{project}}")
OTHER_USAGES = ("GET", "/usages?project_id=someone-else")
RESHAPE = ("POST", "/reshaper")
ROUTES = (PROVIDERS, OWN_USAGES, OTHER_USAGES, RESHAPE)

# Placement's answers (policy.md): Keystone's tokens carry the implied roles, so a
# member is a reader too.
NEW_DEFAULTS = {
    "admin": (200, 200, 200, 403),
    "service": (200, 200, 200, 204),
    "reader": (403, 200, 403, 403),
    "member": (403, 200, 403, 403),
    "system-admin": (403, 403, 403, 403),
    "domain-admin": (403, 403, 403, 403),
}
LEGACY_DEFAULTS = {**NEW_DEFAULTS, "admin": (200, 200, 200, 204)}


def reshape_body(server, token):
    """An empty reshape of a fresh provider: 204 for whoever may reshape."""
    status, _, provider = server.request("POST", "/resource_providers", token,
                                         {"name": f"cn-{uuid.uuid4().hex[:8]}"})
    assert status == 200, provider
    return {"inventories": {provider["uuid"]: {"resource_provider_generation": 0,
                                                "inventories": {}}},
            "allocations": {}}


def outcomes(keystone, server, persona):
    user, scope = PERSONAS[persona]
    token = keystone.token(user, scope)
    service = keystone.token("nova", ("project", PROJECT))
    answers = []
    for method, path in ROUTES:
        path = path.format(project=keystone.project_ids[PROJECT])
        body = reshape_body(server, service) if (method, path) == RESHAPE else None
        answers.append(server.request(method, path, token, body)[0])
    return tuple(answers)


@pytest.mark.parametrize("new_defaults", [True, False], ids=["new-defaults", "legacy"])
def test_roles_on_routes(keystone, make_placement, new_defaults):
    # enforce_scope = false was our own option once; oslo.policy has none: it changes
    # nothing, a system-scoped admin stays refused as by Placement
    server = make_placement(f"""
[oslo_policy]
enforce_new_defaults = {str(new_defaults).lower()}
enforce_scope = false
""")
    expected = NEW_DEFAULTS if new_defaults else LEGACY_DEFAULTS
    got = {persona: outcomes(keystone, server, persona) for persona in PERSONAS}
    assert got == expected


def test_tokens(keystone, make_placement):
    server = make_placement()
    admin = keystone.token("alice", ("project", PROJECT))
    status, headers, body = server.request("GET", "/resource_providers", admin)
    assert status == 200 and "resource_providers" in body
    assert headers["OpenStack-API-Version"] == "placement 1.39"
    for token in (None, "not-a-token", uuid.uuid4().hex):
        status, headers, body = server.request("GET", "/resource_providers", token)
        assert (status, body) == (401, KEYSTONE_401)
        assert headers["WWW-Authenticate"] == f'Keystone uri="{keystone.url}"'
        assert headers["x-openstack-request-id"].startswith("req-")
    # a revoked token is refused once Keystone says so (no cache in front of it here)
    revoked = keystone.token("rita", ("project", PROJECT))
    status, _, _ = call(f"{keystone.url}/auth/tokens", "DELETE", headers={
        "X-Auth-Token": keystone.admin_token, "X-Subject-Token": revoked})
    assert status == 204
    assert server.request("GET", "/resource_providers", revoked)[0] == 401
    # the root document and the public operator endpoints need no token; the metrics
    # need an administrator's
    assert server.request("GET", "/")[0] == 200
    assert server.request("GET", "/healthz")[0] == 200
    assert server.request("GET", "/metrics")[0] == 401
    assert server.request("GET", "/metrics", keystone.token("rita", ("project", PROJECT)))[0] == 403
    assert server.request("GET", "/metrics", admin)[0] == 200


def test_keystone_down_is_503_and_back_is_200(keystone, make_placement):
    server = make_placement()
    seen = keystone.token("alice", ("project", PROJECT))
    unseen = keystone.token("alice", ("project", PROJECT))
    assert server.request("GET", "/traits", seen)[0] == 200
    keystone.stop()
    try:
        status, headers, body = server.request("GET", "/traits", unseen)
        assert status == 503, body
        assert body["title"] == "Service Unavailable"
        assert "The Keystone service is temporarily unavailable." in body["message"]
        assert headers["x-openstack-request-id"].startswith("req-")
        assert "WWW-Authenticate" not in headers
    finally:
        keystone.start()
    assert server.request("GET", "/traits", unseen)[0] == 200


def test_memcached_token_cache_is_shared(keystone, make_placement, memcached):
    """Two servers share memcached: a token one of them validated is accepted by the
    other while Keystone is down, which an in-process cache could not do."""
    first = make_placement(memcached_servers=memcached, name="first")
    second = make_placement(memcached_servers=memcached, name="second")
    token = keystone.token("alice", ("project", PROJECT))
    unseen = keystone.token("alice", ("project", PROJECT))
    assert first.request("GET", "/traits", token)[0] == 200
    keystone.stop()
    try:
        assert second.request("GET", "/traits", token)[0] == 200
        assert second.request("GET", "/traits", unseen)[0] == 503
    finally:
        keystone.start()
    assert second.request("GET", "/traits", unseen)[0] == 200
