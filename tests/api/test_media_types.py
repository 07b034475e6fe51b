"""Which endpoints check Accept (406) and Content-Type (415), http.md §5.1-§5.2.

The caller is refused by every policy: the media checks come first, so a 403
means the endpoint did not check."""
import pytest

from tests.conftest import error_detail
from tests.factories import make_provider

RP = "/resource_providers/{rp}"

ACCEPT_CHECKED = [
    "/resource_providers", RP, RP + "/inventories", RP + "/inventories/VCPU",
    RP + "/usages", RP + "/aggregates", RP + "/traits", RP + "/allocations",
    "/resource_classes", "/resource_classes/VCPU", "/traits",
    "/allocations/{rp}", "/usages?project_id=p", "/allocation_candidates?resources=VCPU:1",
]

ACCEPT_NOT_CHECKED = [
    ("GET", "/traits/HW_CPU_X86_SSE"),
    ("DELETE", RP),
    ("DELETE", RP + "/traits"),
    ("DELETE", "/allocations/{rp}"),
    ("PUT", "/traits/CUSTOM_A"),
    ("DELETE", "/resource_classes/CUSTOM_A"),
]

BODY_ENDPOINTS = [
    ("POST", "/resource_providers", "latest"),
    ("PUT", RP, "latest"),
    ("POST", RP + "/inventories", "latest"),
    ("PUT", RP + "/inventories", "latest"),
    ("PUT", RP + "/inventories/VCPU", "latest"),
    ("PUT", RP + "/aggregates", "latest"),
    ("PUT", RP + "/traits", "latest"),
    ("POST", "/resource_classes", "latest"),
    ("PUT", "/resource_classes/CUSTOM_A", "1.6"),
    ("PUT", "/allocations/{rp}", "latest"),
    ("POST", "/allocations", "latest"),
    ("POST", "/reshaper", "latest"),
]


@pytest.fixture
def rp(db):
    return make_provider("rp", inventory={"VCPU": 1}).uuid


@pytest.mark.parametrize("path", ACCEPT_CHECKED)
@pytest.mark.parametrize("accept", ["text/plain", "text/html,application/xml;q=0.9",
                                    "application/json;q=0"])
def test_json_getters_refuse_an_accept_without_json(make_api, rp, path, accept):
    response = make_api(token="user").get(path.format(rp=rp), headers={"Accept": accept})
    assert response.status_code == 406
    assert "Only application/json is provided" in response.content.decode()


@pytest.mark.parametrize("path", ACCEPT_CHECKED)
@pytest.mark.parametrize("accept", ["*/*", "application/json", "application/*",
                                    "text/html,application/xhtml+xml,application/xml;q=0.9,"
                                    "*/*;q=0.8"])
def test_json_getters_take_accepts_that_admit_json(make_api, rp, path, accept):
    response = make_api(token="user").get(path.format(rp=rp), headers={"Accept": accept})
    assert response.status_code == 403  # past the Accept check, stopped by policy


@pytest.mark.parametrize("method, path", ACCEPT_NOT_CHECKED)
def test_other_endpoints_ignore_accept(make_api, rp, method, path):
    response = make_api(token="user").request(method, path.format(rp=rp),
                                              headers={"Accept": "text/plain"})
    assert response.status_code == 403


def test_root_ignores_accept(api):
    assert api.get("/", headers={"Accept": "text/plain"}).status_code == 200


@pytest.mark.parametrize("method, path, version", BODY_ENDPOINTS)
@pytest.mark.parametrize("content_type, shown", [
    ("text/plain", "text/plain"),
    ("application/xml; charset=utf-8", "application/xml"),
    ("", "None"),
])
def test_body_endpoints_need_json_content_type(make_api, rp, method, path, version,
                                               content_type, shown):
    client = make_api(token="user", version=version)
    # Content-Length 0: a missing Content-Type is then a 415, not the framing 400
    response = client.request(method, path.format(rp=rp), raw="", content_type=content_type)
    assert response.status_code == 415
    assert (f"The media type {shown} is not supported, use application/json"
            in error_detail(response))


@pytest.mark.parametrize("method, path, version", BODY_ENDPOINTS)
def test_json_content_type_with_parameters_passes_the_check(make_api, rp, method, path,
                                                            version):
    client = make_api(token="user", version=version)
    response = client.request(method, path.format(rp=rp), raw="{}",
                              content_type="Application/JSON; charset=utf-8")
    assert response.status_code == 403


@pytest.mark.parametrize("path", ["/traits/CUSTOM_A", "/resource_classes/CUSTOM_A"])
def test_bodyless_puts_do_not_check_content_type(api, path):
    response = api.request("PUT", path, raw="", content_type="text/plain")
    assert response.status_code == 201


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_body_framing_applies_to_every_method(api, method):
    bad_length = api.request(method, "/traits", headers={"Content-Length": "ten"})
    assert bad_length.status_code == 400
    assert "content-length header must be an integer" in error_detail(bad_length)
    no_type = api.request(method, "/traits", raw="x", content_type="")
    assert no_type.status_code == 400
    assert "content-type header required when content-length > 0" in error_detail(no_type)


def test_body_framing_comes_before_routing_and_after_negotiation(api):
    assert api.request("GET", "/nowhere", raw="x", content_type="").status_code == 400
    bad_version = api.request("GET", "/traits", raw="x", content_type="", version="1.99")
    assert bad_version.status_code == 406


@pytest.mark.parametrize("path", [
    "/resource_providers?name=%ff", "/traits?name=in:%C3", "/usages?project_id=%e2%98",
    "/allocation_candidates?resources=VCPU:1&limit=%80",
])
def test_query_string_that_is_not_utf8_is_400_where_queries_are_validated(make_api, path):
    response = make_api().get(path)
    assert response.status_code == 400
    assert "Invalid query string parameters" in error_detail(response)
    # the policy still comes first
    assert make_api(token="user").get(path).status_code == 403


@pytest.mark.parametrize("path", ["/resource_classes", "/resource_providers/{rp}",
                                  "/"])
def test_endpoints_without_a_query_schema_ignore_bad_query_strings(api, rp, path):
    assert api.get(path.format(rp=rp) + "?y=%ff").status_code == 200


def test_utf8_query_strings_decode_with_plus_as_space(api):
    created = api.post("/resource_providers", {"name": "\u2603 snow man"})
    assert created.status_code == 200
    listed = api.get("/resource_providers?name=%E2%98%83+snow+man").json()
    assert [rp["name"] for rp in listed["resource_providers"]] == ["\u2603 snow man"]
