"""/resource_classes (resource-classes.md)."""
import pytest

from providers.models import ResourceClass
from tests.conftest import error_code, error_detail
from tests.factories import make_provider


def names(response):
    return [rc["name"] for rc in response.json()["resource_classes"]]


def test_standard_classes_listed_in_canonical_order(api):
    response = api.get("/resource_classes")
    assert response.status_code == 200
    listed = names(response)
    assert len(listed) == 21
    assert listed[:3] == ["VCPU", "MEMORY_MB", "DISK_GB"]
    assert listed[-1] == "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC"
    first = response.json()["resource_classes"][0]
    assert first == {"name": "VCPU",
                     "links": [{"rel": "self", "href": "/resource_classes/VCPU"}]}


def test_create_then_show_then_list(api):
    response = api.post("/resource_classes", {"name": "CUSTOM_GOLD"})
    assert response.status_code == 201
    assert response["Location"].endswith("/resource_classes/CUSTOM_GOLD")
    assert response.content == b"" and "Content-Type" not in response
    assert "Last-Modified" not in response
    shown = api.get("/resource_classes/CUSTOM_GOLD")
    assert shown.status_code == 200 and shown.json()["name"] == "CUSTOM_GOLD"
    assert shown["Cache-Control"] == "no-cache" and "Last-Modified" in shown
    assert names(api.get("/resource_classes"))[-1] == "CUSTOM_GOLD"


def test_no_cache_headers_before_1_15(api):
    response = api.get("/resource_classes/VCPU", version="1.14")
    assert "Last-Modified" not in response and "Cache-Control" not in response


@pytest.mark.parametrize("body", [
    {"name": "IRON_NFV"}, {"name": "CUSTOM_lower"}, {"name": "CUSTOM_" + "A" * 249},
    {"name": 5}, {}, {"name": "CUSTOM_A", "extra": 1},
])
def test_create_rejects_bad_names(api, body):
    response = api.post("/resource_classes", body)
    assert response.status_code == 400
    assert "JSON does not validate" in error_detail(response)


def test_create_duplicate_is_409_without_specific_code(api):
    api.post("/resource_classes", {"name": "CUSTOM_GOLD"})
    response = api.post("/resource_classes", {"name": "CUSTOM_GOLD"})
    assert response.status_code == 409
    assert error_code(response) == "placement.undefined_code"
    assert "Conflicting resource class already exists: CUSTOM_GOLD" in error_detail(response)


def test_show_unknown_is_404(api):
    response = api.get("/resource_classes/CUSTOM_NOPE")
    assert response.status_code == 404
    assert "No such resource class CUSTOM_NOPE." in error_detail(response)


def test_rename_before_1_7(api):
    api.post("/resource_classes", {"name": "CUSTOM_OLD"})
    response = api.put("/resource_classes/CUSTOM_OLD", {"name": "CUSTOM_NEW"}, version="1.6")
    assert response.status_code == 200
    assert response.json()["name"] == "CUSTOM_NEW"
    assert api.get("/resource_classes/CUSTOM_OLD").status_code == 404


def test_rename_errors(api):
    api.post("/resource_classes", {"name": "CUSTOM_A"})
    api.post("/resource_classes", {"name": "CUSTOM_B"})
    taken = api.put("/resource_classes/CUSTOM_A", {"name": "CUSTOM_B"}, version="1.6")
    assert taken.status_code == 409
    assert "Resource class already exists: CUSTOM_B" in error_detail(taken)
    standard = api.put("/resource_classes/VCPU", {"name": "CUSTOM_VCPU"}, version="1.6")
    assert standard.status_code == 400
    assert "Cannot update standard resource class VCPU" in error_detail(standard)
    missing = api.put("/resource_classes/CUSTOM_Z", {"name": "CUSTOM_Y"}, version="1.6")
    assert missing.status_code == 404
    empty = api.put("/resource_classes/CUSTOM_A", raw="", version="1.6")
    assert empty.status_code == 400 and "Malformed JSON" in error_detail(empty)
    to_standard = api.put("/resource_classes/CUSTOM_A", {"name": "VCPU"}, version="1.6")
    assert to_standard.status_code == 400


def test_put_creates_or_verifies_from_1_7(api):
    created = api.put("/resource_classes/CUSTOM_NEW", version="1.7")
    assert created.status_code == 201
    assert created["Location"].endswith("/resource_classes/CUSTOM_NEW")
    again = api.put("/resource_classes/CUSTOM_NEW", version="1.7")
    assert again.status_code == 204
    assert ResourceClass.objects.filter(name="CUSTOM_NEW").count() == 1


@pytest.mark.parametrize("name", ["VCPU", "CUSTOM_lower", "CUSTOM_" + "A" * 249, 'CUSTOM_"X'])
def test_put_1_7_rejects_bad_names(api, name):
    response = api.put(f"/resource_classes/{name}", version="1.7")
    assert response.status_code == 400


def test_delete(api):
    api.post("/resource_classes", {"name": "CUSTOM_GONE"})
    assert api.delete("/resource_classes/CUSTOM_GONE").status_code == 204
    assert api.delete("/resource_classes/CUSTOM_GONE").status_code == 404


def test_delete_standard_is_400(api):
    response = api.delete("/resource_classes/VCPU")
    assert response.status_code == 400
    assert "Cannot delete standard resource class VCPU." in error_detail(response)


def test_delete_in_use_is_409(api):
    api.post("/resource_classes", {"name": "CUSTOM_USED"})
    make_provider("rp", inventory={"CUSTOM_USED": 4})
    response = api.delete("/resource_classes/CUSTOM_USED")
    assert response.status_code == 409
    assert "Class is in use in inventory." in error_detail(response)


def test_policy_applies_to_every_action(api):
    for method, path in [("GET", "/resource_classes"), ("GET", "/resource_classes/VCPU"),
                         ("DELETE", "/resource_classes/CUSTOM_X")]:
        assert api.request(method, path, token="user").status_code == 403


def test_not_before_1_2(api):
    for method, path in [("GET", "/resource_classes"), ("POST", "/resource_classes"),
                         ("GET", "/resource_classes/VCPU"), ("PUT", "/resource_classes/CUSTOM_X"),
                         ("DELETE", "/resource_classes/CUSTOM_X")]:
        response = api.request(method, path, {"name": "CUSTOM_X"}, version="1.1")
        assert response.status_code == 404, (method, path)
    assert not ResourceClass.objects.filter(name="CUSTOM_X").exists()


def test_list_ignores_query_parameters(api):
    assert len(names(api.get("/resource_classes?name=VCPU&bogus=1"))) == 21


def test_post_needs_json_content_type(api):
    response = api.post("/resource_classes", raw='{"name": "CUSTOM_X"}',
                        content_type="text/plain")
    assert response.status_code == 415


def test_rename_order_and_inventory_follows(api):
    api.post("/resource_classes", {"name": "CUSTOM_A"})
    # schema before lookup, lookup before the standard-class check
    bad = api.put("/resource_classes/CUSTOM_Z", {"name": "bad"}, version="1.6")
    assert bad.status_code == 400 and "JSON does not validate" in error_detail(bad)
    assert api.put("/resource_classes/CUSTOM_Z", raw="{}", content_type="text/plain",
                   version="1.6").status_code == 415
    rp = make_provider("rp", inventory={"CUSTOM_A": 4})
    renamed = api.put("/resource_classes/CUSTOM_A", {"name": "CUSTOM_B"}, version="1.6")
    assert renamed.status_code == 200 and "Location" not in renamed
    inventories = api.get(f"/resource_providers/{rp.uuid}/inventories").json()["inventories"]
    assert list(inventories) == ["CUSTOM_B"]


def test_put_1_7_reads_no_body_and_checks_no_content_type(api):
    response = api.put("/resource_classes/CUSTOM_X", raw="not json", content_type="text/plain",
                       version="1.7")
    assert response.status_code == 201
    assert response.content == b""
