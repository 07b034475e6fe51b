"""405 with Allow for every route, whatever the microversion (http.md §3)."""
import pytest

from tests.conftest import error_detail

U = "9f3e2d1c-0000-4000-8000-000000000001"
ALLOW = {
    "/": "GET",
    "/resource_classes": "GET, POST",
    "/resource_classes/CUSTOM_A": "GET, PUT, DELETE",
    "/resource_providers": "GET, POST",
    f"/resource_providers/{U}": "GET, DELETE, PUT",
    f"/resource_providers/{U}/inventories": "GET, POST, PUT, DELETE",
    f"/resource_providers/{U}/inventories/VCPU": "GET, PUT, DELETE",
    f"/resource_providers/{U}/usages": "GET",
    f"/resource_providers/{U}/aggregates": "GET, PUT",
    f"/resource_providers/{U}/allocations": "GET",
    f"/resource_providers/{U}/traits": "GET, PUT, DELETE",
    "/allocations": "POST",
    f"/allocations/{U}": "GET, PUT, DELETE",
    "/allocation_candidates": "GET",
    "/traits": "GET",
    "/traits/CUSTOM_A": "GET, PUT, DELETE",
    "/usages": "GET",
    "/reshaper": "POST",
}
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]


@pytest.mark.parametrize("path, allow", ALLOW.items())
@pytest.mark.parametrize("version", ["1.0", "latest"])
def test_methods_outside_allow_are_405_at_every_version(make_api, path, allow, version):
    client = make_api(token="user", version=version)  # 405 comes before policy
    for method in METHODS:
        if method in allow.split(", "):
            continue
        response = client.request(method, path)
        assert response.status_code == 405, (method, response.status_code)
        assert response["Allow"] == allow
        if method != "HEAD":
            assert (f"The method {method} is not allowed for this resource."
                    in error_detail(response))


def test_delete_all_inventories_below_1_5_is_405_without_allow(api):
    response = api.delete(f"/resource_providers/{U}/inventories", version="1.4")
    assert response.status_code == 405
    assert "Allow" not in response
    assert api.delete(f"/resource_providers/{U}/inventories", version="1.5").status_code == 404


@pytest.mark.parametrize("path", ["/resource_providers/", "/traits/", "/usages/x",
                                  f"/resource_providers/{U}/inventories/VCPU/x"])
def test_unknown_paths_are_404_for_any_method(api, path):
    for method in ("GET", "POST", "PATCH"):
        response = api.request(method, path)
        assert response.status_code == 404, (method, path)
        assert "The resource could not be found." in error_detail(response)


def test_path_segments_are_percent_decoded(api):
    response = api.get("/resource_providers/%e2%98%83")
    assert response.status_code == 404
    assert "\u2603" in error_detail(response)
