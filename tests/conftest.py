"""Shared fixtures: an HTTP client speaking Placement through the whole Django stack."""
import json

import pytest
from django.test import Client

from tests.openapi_check import response_problem

CHECKED_VERSIONS = ("latest", "1.39")


class PlacementClient:
    """Django test client with Placement's headers: token, microversion, JSON bodies.

    api.get("/traits", version="1.6"); api.put("/x", {"a": 1}); responses are Django's,
    so .status_code, .json(), and headers via response["Header"] / response.headers.
    """

    def __init__(self, version="latest", token="admin"):
        self.client = Client()
        self.version = version
        self.token = token

    def request(self, method, path, body=None, version=None, headers=None,
                content_type="application/json", raw=None, token=None):
        extra = {}
        version = version if version is not None else self.version
        if version:
            extra["HTTP_OPENSTACK_API_VERSION"] = f"placement {version}"
        token = token if token is not None else self.token
        if token:
            extra["HTTP_X_AUTH_TOKEN"] = token
        for name, value in (headers or {}).items():
            key = name.upper().replace("-", "_")
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                key = "HTTP_" + key
            extra[key] = value
        data = raw if raw is not None else (json.dumps(body) if body is not None else "")
        kwargs = {"data": data}
        if raw is not None or body is not None or content_type != "application/json":
            kwargs["content_type"] = content_type
            if data == "":  # Django only sends Content-Type along with a body
                extra.setdefault("CONTENT_TYPE", content_type)
        response = self.client.generic(method, path, **kwargs, **extra)
        if version in CHECKED_VERSIONS and "HTTP_ACCEPT" not in extra:
            # the OpenAPI document describes the latest microversion
            problem = response_problem(method, path, response)
            assert problem is None, problem
        return response

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)


@pytest.fixture
def api(db):
    return PlacementClient()


@pytest.fixture
def make_api(db):
    """Build clients with other versions or tokens: make_api(version="1.10", token="user")."""
    return PlacementClient


def error_code(response):
    return response.json()["errors"][0].get("code")


def error_detail(response):
    return response.json()["errors"][0]["detail"]


@pytest.fixture(autouse=True)
def legacy_policy_defaults(settings):
    """The suite runs as the conformance `default` profile: enforce_new_defaults false
    (an admin may reshape). Tests of the new defaults set it back to True."""
    settings.PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS = False
