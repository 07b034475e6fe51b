"""Microversion negotiation and its headers (http.md §4)."""
import pytest

from foundation.api import microversion
from foundation.api.microversion import Version
from tests.conftest import error_detail


@pytest.mark.parametrize("header, expected", [
    ("placement 1.20", "1.20"),
    ("compute 2.1, placement 1.7", "1.7"),
    ("Placement 1.7", "1.7"),
    ("placement 1.01", "1.1"),
    ("placement  1.5 ", "1.5"),
    ("compute 2.1", "1.0"),
    ("placement", "1.0"),
    ("placement 1.2, placement 1.9", "1.9"),
    ("placement latest", "1.39"),
    ("", "1.0"),
])
def test_negotiate_picks_the_last_placement_entry(header, expected):
    assert str(microversion.negotiate(header)) == expected


@pytest.mark.parametrize("header", ["placement pony.horse", "placement 1.2.3",
                                    "placement 1", "placement LATEST"])
def test_negotiate_rejects_malformed(header):
    with pytest.raises(microversion.InvalidVersion):
        microversion.negotiate(header)


@pytest.mark.parametrize("header", ["placement 0.5", "placement 1.40", "placement 2.0"])
def test_negotiate_rejects_out_of_range(header):
    with pytest.raises(microversion.UnacceptableVersion):
        microversion.negotiate(header)


def test_negotiation_messages_name_the_value_as_sent():
    with pytest.raises(microversion.InvalidVersion,
                       match=r"^invalid version string: pony\.horse; "):
        microversion.negotiate("placement pony.horse")
    # the range check formats the pair (1.040 is 1.40) but the message quotes the header
    with pytest.raises(microversion.UnacceptableVersion,
                       match=r"^Unacceptable version header: 1\.040$"):
        microversion.negotiate("compute 2.1, placement 1.040")


def test_versions_lists_every_served_version_in_order():
    assert microversion.VERSIONS[0] == "1.0" and microversion.VERSIONS[-1] == "1.39"
    assert len(microversion.VERSIONS) == 40


def test_version_compares_with_tuples_and_versions():
    assert Version(1, 10) > (1, 9)
    assert Version(1, 10) > Version(1, 2)
    assert Version(1, 2) == (1, 2)
    assert Version(1, 29).matches((1, 29), None)
    assert not Version(1, 28).matches((1, 29))


def test_root_document(api):
    response = api.get("/", token="")
    assert response.status_code == 200
    assert response.json() == {"versions": [{
        "id": "v1.0", "max_version": "1.39", "min_version": "1.0",
        "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}]}
    assert response["OpenStack-API-Version"] == "placement 1.39"
    assert "openstack-api-version" in response["Vary"]
    assert "Last-Modified" in response and response["Cache-Control"] == "no-cache"


def test_default_version_is_minimum_and_has_no_cache_headers(api):
    response = api.get("/", version="")
    assert response["OpenStack-API-Version"] == "placement 1.0"
    assert "Last-Modified" not in response
    assert "Cache-Control" not in response


def test_legacy_header_is_ignored(api):
    response = api.get("/", version="", headers={"X-OpenStack-Placement-API-Version": "1.5"})
    assert response["OpenStack-API-Version"] == "placement 1.0"


def test_malformed_version_is_400_without_code(api):
    response = api.get("/resource_classes", version="pony.horse")
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert "Invalid microversion: invalid version string: pony.horse" in error["detail"]
    assert "code" not in error
    assert "OpenStack-API-Version" not in response


def test_unacceptable_version_is_406_with_bounds(api):
    response = api.get("/", version="1.40")
    assert response.status_code == 406
    error = response.json()["errors"][0]
    assert "Unacceptable version header: 1.40" in error["detail"]
    assert error["max_version"] == "1.39" and error["min_version"] == "1.0"
    assert "code" not in error


def test_406_is_html_when_client_wants_html(api):
    response = api.get("/", version="0.5", headers={"Accept": "text/html"})
    assert response.status_code == 406
    assert response["Content-Type"].startswith("text/html")
    assert b"Unacceptable version header: 0.5" in response.content


def test_route_added_later_is_404_below_its_version(api):
    response = api.get("/resource_classes", version="1.1")
    assert response.status_code == 404
    assert "The resource could not be found." in error_detail(response)
    assert api.get("/resource_classes", version="1.2").status_code == 200
