"""CORS as the `cors` profile configures it (http.md §13, conformance README)."""
import re

import pytest

VALID = "http://valid.example.com"
cors_profile = pytest.mark.usefixtures("cors")


@pytest.fixture
def cors(settings):
    settings.PLACEMENT_CORS_ALLOWED_ORIGINS = [VALID]
    settings.PLACEMENT_CORS_ALLOW_HEADERS = ["openstack-api-version"]


def preflight(api, path="/resource_providers", origin=VALID, method="GET", headers=None):
    request_headers = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers is not None:
        request_headers["Access-Control-Request-Headers"] = headers
    return api.request("OPTIONS", path, token="", version="", headers=request_headers)


@cors_profile
def test_preflight_is_answered_before_authentication(api):
    response = preflight(api, headers="openstack-api-version")
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == VALID
    assert response["Access-Control-Allow-Headers"] == "openstack-api-version"
    assert response["Access-Control-Allow-Methods"] == "GET"
    assert response["Access-Control-Allow-Credentials"] == "true"
    assert response["Access-Control-Max-Age"] == "3600"
    assert re.match(r"^req-[0-9a-f-]{36}$", response["x-openstack-request-id"])


@cors_profile
@pytest.mark.parametrize("origin, method, headers", [
    ("http://invalid.example.com", "GET", None),
    (VALID, "TRACE", None),
    (VALID, "GET", "openstack-api-version, x-not-allowed"),
])
def test_refused_preflight_is_200_without_cors_headers(api, origin, method, headers):
    response = preflight(api, origin=origin, method=method, headers=headers)
    assert response.status_code == 200
    assert "Access-Control-Allow-Origin" not in response
    assert "Access-Control-Allow-Methods" not in response


@cors_profile
def test_actual_requests_from_the_valid_origin_carry_cors_headers(api):
    for token, status in (("admin", 200), ("", 401)):
        response = api.get("/resource_providers", token=token, headers={"Origin": VALID})
        assert response.status_code == status
        assert response["Access-Control-Allow-Origin"] == VALID
        assert response["Access-Control-Allow-Credentials"] == "true"
        assert "OpenStack-API-Version" in response["Access-Control-Expose-Headers"]
        assert "X-Openstack-Request-Id" in response["Access-Control-Expose-Headers"]


@cors_profile
def test_requests_from_other_origins_get_no_cors_headers(api):
    response = api.get("/", headers={"Origin": "http://invalid.example.com"})
    assert response.status_code == 200
    assert "Access-Control-Allow-Origin" not in response


def test_default_allowed_headers_include_the_auth_token(api, settings):
    settings.PLACEMENT_CORS_ALLOWED_ORIGINS = [VALID]
    response = preflight(api, method="PUT", headers="X-Auth-Token,OpenStack-API-Version")
    assert response["Access-Control-Allow-Origin"] == VALID


def test_without_cors_a_preflight_is_an_ordinary_405(api):
    response = api.request("OPTIONS", "/", token="user", headers={
        "Origin": VALID, "Access-Control-Request-Method": "GET"})
    assert response.status_code == 405
    assert "Access-Control-Allow-Origin" not in response
    assert "Access-Control-Allow-Origin" not in api.get("/", headers={"Origin": VALID})


@cors_profile
def test_the_other_cors_options_take_effect(api, settings):
    """[cors] allow_credentials, max_age, allow_methods and expose_headers."""
    settings.PLACEMENT_CORS_ALLOW_CREDENTIALS = False
    settings.PLACEMENT_CORS_MAX_AGE = 60
    settings.PLACEMENT_CORS_ALLOW_METHODS = ["GET"]
    settings.PLACEMENT_CORS_EXPOSE_HEADERS = ["X-Openstack-Request-Id"]
    response = preflight(api)
    assert response["Access-Control-Max-Age"] == "60"
    assert "Access-Control-Allow-Credentials" not in response
    assert "Access-Control-Allow-Origin" not in preflight(api, method="PUT")
    actual = api.get("/", headers={"Origin": VALID})
    assert actual["Access-Control-Expose-Headers"] == "X-Openstack-Request-Id"
    assert "Access-Control-Allow-Credentials" not in actual
