"""Microversion response headers, request ids and 500s through HTTP (http.md §4, §6.5, §9)."""
import re

import pytest

from providers.api.views import resource_classes as resource_class_views
from tests.conftest import error_detail

REQUEST_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.mark.parametrize("header, served", [
    ("placement latest", "1.39"),
    ("placement 1.20", "1.20"),
    ("compute 2.1, placement 1.7", "1.7"),
    ("placement 1.7, compute 2.1", "1.7"),
    ("Placement 1.7", "1.7"),
    ("PLACEMENT 1.02", "1.2"),
    ("placement  1.5 ", "1.5"),
    ("compute 2.1", "1.0"),
    ("placement", "1.0"),
    ("placement1.5", "1.0"),
    ("placement 1.4, placement 1.9", "1.9"),
])
def test_served_version_header_and_vary(api, header, served):
    response = api.get("/resource_providers", version="",
                       headers={"OpenStack-API-Version": header})
    assert response.status_code == 200
    assert response["OpenStack-API-Version"] == f"placement {served}"
    assert "openstack-api-version" in response["Vary"].lower()


@pytest.mark.parametrize("value", ["pony.horse", "1.2.3", "1", "LATEST", "1.x", ""])
def test_malformed_version_is_400_without_version_headers(api, value):
    response = api.get("/resource_providers", version="",
                       headers={"OpenStack-API-Version": f"placement {value}"})
    if value == "":  # "placement" alone has no version: the default
        assert response.status_code == 200
        return
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert f"Invalid microversion: invalid version string: {value}" in error["detail"]
    assert "code" not in error and error["title"] == "Bad Request"
    assert "OpenStack-API-Version" not in response and "Vary" not in response
    assert error["request_id"] == response["x-openstack-request-id"]


@pytest.mark.parametrize("value", ["0.5", "1.40", "2.0", "0.0"])
def test_unsupported_version_is_406_on_every_path(api, value):
    for path in ("/", "/resource_providers", "/nowhere"):
        response = api.get(path, version=value)
        assert response.status_code == 406, path
        error = response.json()["errors"][0]
        assert f"Invalid microversion: Unacceptable version header: {value}" in error["detail"]
        assert (error["min_version"], error["max_version"]) == ("1.0", "1.39")
        assert "code" not in error
        assert "OpenStack-API-Version" not in response
        assert REQUEST_ID.match(response["x-openstack-request-id"])


def test_authentication_comes_before_negotiation(api):
    response = api.get("/resource_providers", token="", version="pony.horse")
    assert response.status_code == 401
    assert "OpenStack-API-Version" not in response and "Vary" not in response
    assert REQUEST_ID.match(response["x-openstack-request-id"])


def test_root_is_negotiated_without_a_token(api):
    assert api.get("/", token="", version="1.40").status_code == 406
    response = api.get("/", token="", version="1.14")
    assert response["OpenStack-API-Version"] == "placement 1.14"
    assert "Last-Modified" not in response and "Cache-Control" not in response


@pytest.mark.parametrize("method, path, status", [
    ("GET", "/nowhere", 404),
    ("GET", "/resource_classes/CUSTOM_MISSING", 404),
    ("GET", "/resource_classes", 404),  # gated at 1.1
    ("PATCH", "/resource_providers", 405),
])
def test_errors_after_negotiation_carry_the_version(api, method, path, status):
    response = api.request(method, path, version="1.1")
    assert response.status_code == status
    assert response["OpenStack-API-Version"] == "placement 1.1"
    assert response.json()["errors"][0]["request_id"] == response["x-openstack-request-id"]


@pytest.mark.parametrize("version, has_code", [("1.22", False), ("1.23", True)])
def test_unexpected_failure_is_a_json_500(api, monkeypatch, version, has_code):
    def explode(*args, **kwargs):
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(resource_class_views.ResourceClass.objects, "order_by", explode)
    response = api.get("/resource_classes", version=version)
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    error = response.json()["errors"][0]
    assert error["status"] == 500 and error["title"] == "Internal Server Error"
    # the exception's words (they can name hosts, ports, SQL) only in the log
    assert "the disk is on fire" not in error_detail(response)
    assert "RuntimeError" in error_detail(response)
    assert response["x-openstack-request-id"] in error_detail(response)
    assert ("code" in error) is has_code
    if has_code:
        assert error["code"] == "placement.undefined_code"
    assert error["request_id"] == response["x-openstack-request-id"]
    assert "OpenStack-API-Version" not in response and "Vary" not in response


def test_client_request_id_is_not_echoed(api):
    mine = "req-12345678-1234-4234-8234-123456789012"
    for token in ("admin", ""):
        response = api.get("/traits", token=token, headers={"X-OpenStack-Request-ID": mine})
        assert REQUEST_ID.match(response["x-openstack-request-id"])
        assert response["x-openstack-request-id"] != mine
