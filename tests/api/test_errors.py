"""The error body, 404/405, content checks, auth and request ids (http.md)."""
import re

import pytest
from django.test import override_settings

from tests.conftest import error_code, error_detail

REQUEST_ID = re.compile(r"^req-[0-9a-f-]{36}$")


def test_error_body_shape_and_code_from_1_23(api):
    response = api.get("/resource_classes/CUSTOM_NOPE", version="1.23")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    error = response.json()["errors"][0]
    assert set(error) == {"status", "title", "detail", "request_id", "code"}
    assert error["status"] == 404 and error["title"] == "Not Found"
    assert error["code"] == "placement.undefined_code"
    assert error["request_id"] == response["x-openstack-request-id"]
    assert "No such resource class CUSTOM_NOPE." in error["detail"]


def test_detail_is_one_line_after_the_generic_sentence(api):
    # Placement flattens the specific message; osc-placement shows only the last line.
    response = api.post("/resource_classes", {"name": "custom_lower"}, version="1.30")
    assert response.status_code == 400
    generic, specific = error_detail(response).split("\n\n ")
    assert generic == ("The server could not comply with the request since it is either "
                       "malformed or otherwise incorrect.")
    assert "\n" not in specific and "\r" not in specific
    assert specific.startswith(
        "JSON does not validate: 'custom_lower' does not match '^CUSTOM_[A-Z0-9_]+$'  "
        "Failed validating 'pattern' in schema")
    assert specific.endswith("  ")


def test_no_code_before_1_23(api):
    response = api.get("/resource_classes/CUSTOM_NOPE", version="1.22")
    assert "code" not in response.json()["errors"][0]


def test_every_response_has_a_fresh_request_id(api):
    first = api.get("/")["x-openstack-request-id"]
    second = api.get("/", headers={"X-OpenStack-Request-ID": "req-" + "0" * 8 + "-0000-0000-0000-" + "0" * 12})
    assert REQUEST_ID.match(first)
    assert second["x-openstack-request-id"] != first
    assert second["x-openstack-request-id"] != "req-00000000-0000-0000-0000-000000000000"
    unauthenticated = api.get("/traits", token="")
    assert REQUEST_ID.match(unauthenticated["x-openstack-request-id"])


def test_unknown_path_is_json_404(api):
    response = api.get("/nothing/here")
    assert response.status_code == 404
    assert "The resource could not be found." in error_detail(response)


def test_trailing_slash_is_another_path(api):
    assert api.get("/resource_classes/").status_code == 404


def test_unknown_path_404_for_post_too(api):
    assert api.post("/nothing", {"a": 1}).status_code == 404


@pytest.mark.parametrize("method, path, allow", [
    ("POST", "/", "GET"),
    ("DELETE", "/resource_classes", "GET, POST"),
    ("POST", "/resource_classes/CUSTOM_A", "GET, PUT, DELETE"),
    ("POST", "/traits", "GET"),
    ("HEAD", "/traits", "GET"),
    ("OPTIONS", "/traits/CUSTOM_A", "GET, PUT, DELETE"),
])
def test_method_not_allowed_has_allow_in_placement_order(api, method, path, allow):
    response = api.request(method, path, version="1.0")
    assert response.status_code == 405
    assert response["Allow"] == allow
    if method != "HEAD":
        assert f"The method {method} is not allowed for this resource." in error_detail(response)


def test_missing_token_is_401_with_keystone_style_body(api):
    response = api.get("/resource_classes", token="")
    assert response.status_code == 401
    assert response.json()["title"] == "Unauthorized"
    assert "OpenStack-API-Version" not in response


def test_root_needs_no_token(api):
    assert api.get("/", token="").status_code == 200


def test_user_without_roles_is_forbidden(api):
    response = api.get("/resource_classes", token="user")
    assert response.status_code == 403
    assert "Policy does not allow placement:resource_classes:list to be performed." in (
        error_detail(response))


def test_roles_header_grants_service(api):
    response = api.get("/resource_classes", token="user", headers={"X-Roles": "service"})
    assert response.status_code == 200


def test_system_scope_is_denied_even_for_admin(api):
    response = api.get("/resource_classes", headers={"OpenStack-System-Scope": "all"})
    assert response.status_code == 403


def test_accept_check_406(api):
    response = api.get("/resource_classes", headers={"Accept": "text/plain"})
    assert response.status_code == 406
    ok = api.get("/resource_classes", headers={
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"})
    assert ok.status_code == 200
    refused = api.get("/resource_classes", headers={"Accept": "application/json;q=0"})
    assert refused.status_code == 406


def test_content_type_415(api):
    response = api.post("/resource_classes", raw="name=CUSTOM_A", content_type="text/plain")
    assert response.status_code == 415
    assert "The media type text/plain is not supported, use application/json" in (
        error_detail(response))


def test_content_type_with_charset_is_fine(api):
    response = api.post("/resource_classes", raw='{"name": "CUSTOM_A"}',
                        content_type="application/json; charset=utf-8")
    assert response.status_code == 201


def test_malformed_json_is_400(api):
    response = api.post("/resource_classes", raw="{bad", content_type="application/json")
    assert response.status_code == 400
    assert "Malformed JSON" in error_detail(response)


def test_body_without_content_type_is_400(api):
    response = api.request("POST", "/resource_classes", raw='{"name": "CUSTOM_A"}',
                           content_type="")
    assert response.status_code == 400
    assert "content-type header required when content-length > 0" in error_detail(response)


@override_settings(PLACEMENT_CORS_ALLOWED_ORIGINS=["http://valid.example.com"],
                   PLACEMENT_CORS_ALLOW_HEADERS=["openstack-api-version"])
def test_cors_preflight_and_simple_request(api):
    preflight = api.request("OPTIONS", "/", token="", headers={
        "Origin": "http://valid.example.com",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "openstack-api-version"})
    assert preflight.status_code == 200
    assert preflight["Access-Control-Allow-Origin"] == "http://valid.example.com"
    assert preflight["Access-Control-Allow-Headers"] == "openstack-api-version"
    other = api.request("OPTIONS", "/", token="", headers={
        "Origin": "http://invalid.example.com", "Access-Control-Request-Method": "GET"})
    assert other.status_code == 200 and "Access-Control-Allow-Origin" not in other
    simple = api.get("/", headers={"Origin": "http://valid.example.com"})
    assert simple["Access-Control-Allow-Origin"] == "http://valid.example.com"


def test_options_without_cors_is_405(api):
    assert api.request("OPTIONS", "/", token="").status_code == 405



def test_nul_characters_are_refused_not_500(api):
    body = api.post("/resource_providers", {"name": "a\u0000b"})
    assert body.status_code == 400
    assert "NUL characters are not allowed" in error_detail(body)
    query = api.get("/resource_providers?name=a%00b")
    assert query.status_code == 400
    assert api.get("/resource_providers/a%00b").status_code == 404


def test_conflicting_inventory_in_use_message_lists_classes_in_class_order(api):
    from tests.factories import allocate, make_consumer, make_provider

    rp = make_provider("rp", inventory={"VCPU": 8, "DISK_GB": 100})
    allocate(make_consumer(), rp, DISK_GB=10, VCPU=1)
    response = api.delete(f"/resource_providers/{rp.uuid}/inventories")
    assert response.status_code == 409
    assert "Inventory for 'VCPU, DISK_GB'" in error_detail(response)
