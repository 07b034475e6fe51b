"""A service mounted under a path prefix (http.md §2): the root document answers
the prefix with and without its slash, and links and Location include the prefix."""
import json

import pytest
from django.urls import set_script_prefix

PREFIX = "/placement"


@pytest.fixture
def mounted(api):
    """Admin requests at latest as a WSGI server mounting the service at /placement."""
    def request(method, path, body=None):
        set_script_prefix(PREFIX)  # what Django's WSGIHandler does per request; the
        # test client only passes SCRIPT_NAME on
        return api.client.generic(
            method, path, data=json.dumps(body) if body is not None else "",
            content_type="application/json", SCRIPT_NAME=PREFIX,
            HTTP_X_AUTH_TOKEN="admin", HTTP_OPENSTACK_API_VERSION="placement latest")
    yield request
    set_script_prefix("/")  # the prefix is thread-local; leave other tests unprefixed


@pytest.mark.parametrize("path_info", ["/", ""])
def test_root_document_needs_no_token_under_a_prefix(api, path_info):
    response = api.client.generic("GET", "/", SCRIPT_NAME=PREFIX, PATH_INFO=path_info)
    assert response.status_code == 200
    assert response.json()["versions"][0]["max_version"] == "1.39"


def test_other_paths_still_need_a_token_under_a_prefix(api):
    response = api.client.generic("GET", "/resource_providers", SCRIPT_NAME=PREFIX)
    assert response.status_code == 401


def test_links_and_location_include_the_prefix(mounted):
    response = mounted("POST", "/resource_providers", {"name": "rp"})
    assert response.status_code == 200
    uuid = response.json()["uuid"]
    assert response["Location"] == f"http://testserver{PREFIX}/resource_providers/{uuid}"
    self_link = next(link["href"] for link in response.json()["links"]
                     if link["rel"] == "self")
    assert self_link == f"{PREFIX}/resource_providers/{uuid}"
    listed = mounted("GET", "/resource_providers").json()["resource_providers"][0]
    assert {"rel": "inventories", "href": f"{PREFIX}/resource_providers/{uuid}/inventories"} in (
        listed["links"])
