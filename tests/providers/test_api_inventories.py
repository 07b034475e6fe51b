"""/resource_providers/{uuid}/inventories[/{rc}] through the HTTP API."""
import pytest

from providers.models import Inventory, ResourceProvider
from tests.conftest import error_code, error_detail
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def rp(db):
    return make_provider("cn")


def url(rp, rc=None):
    base = f"/resource_providers/{rp.uuid}/inventories"
    return f"{base}/{rc}" if rc else base


def gen(rp):
    return ResourceProvider.objects.get(pk=rp.pk).generation


def put_all(api, rp, inventories, generation=None, **kw):
    generation = gen(rp) if generation is None else generation
    return api.put(url(rp), {"resource_provider_generation": generation,
                             "inventories": inventories}, **kw)


FULL = {"total": 2048, "reserved": 512, "min_unit": 10, "max_unit": 1024, "step_size": 10,
        "allocation_ratio": 1.0}


def test_get_empty_collection(api, rp):
    resp = api.get(url(rp), version="1.15")
    assert resp.json() == {"resource_provider_generation": 0, "inventories": {}}
    assert resp["Cache-Control"] == "no-cache"
    assert "Last-Modified" not in resp.headers  # Quirk: empty collection


def test_get_unknown_provider(api):
    resp = api.get("/resource_providers/nope/inventories")
    assert resp.status_code == 404
    assert "No resource provider with uuid nope found" in error_detail(resp)


def test_put_collection_fills_defaults_and_bumps(api, rp):
    resp = put_all(api, rp, {"IPV4_ADDRESS": {"total": 253}, "DISK_GB": FULL},
                   version="1.15")
    assert resp.status_code == 200
    assert resp.json() == {"resource_provider_generation": 1, "inventories": {
        "IPV4_ADDRESS": {"total": 253, "reserved": 0, "min_unit": 1,
                         "max_unit": 2147483647, "step_size": 1, "allocation_ratio": 1.0},
        "DISK_GB": FULL}}
    assert resp["Last-Modified"].endswith("GMT")
    got = api.get(url(rp), version="1.15")
    assert got.json()["inventories"]["DISK_GB"] == FULL
    assert got["Last-Modified"].endswith("GMT")
    # unchanged content still bumps; absent classes are removed
    resp = put_all(api, rp, {"DISK_GB": FULL})
    assert resp.json()["resource_provider_generation"] == 2
    assert set(api.get(url(rp)).json()["inventories"]) == {"DISK_GB"}
    assert put_all(api, rp, {}).json() == {"resource_provider_generation": 3,
                                           "inventories": {}}
    assert not Inventory.objects.exists()


def test_put_collection_generation_conflict(api, rp):
    resp = put_all(api, rp, {"VCPU": {"total": 1}}, generation=5)
    assert resp.status_code == 409
    assert error_code(resp) == "placement.concurrent_update"
    assert "resource provider generation conflict" in error_detail(resp)


@pytest.mark.parametrize("inventories,message", [
    ({"VCPU": {}}, "'total' is a required property"),
    ({"VCPU": {"total": 0}}, "JSON does not validate"),
    ({"VCPU": {"total": 1, "step_size": 0}}, "JSON does not validate"),
    ({"VCPU": {"total": 1, "reserved": -1}}, "JSON does not validate"),
    ({"VCPU": {"total": 2147483648}}, "JSON does not validate"),
    ({"VCPU": {"total": 1, "allocation_ratio": 3.5e38}}, "JSON does not validate"),
    ({"VCPU": {"total": 1, "bogus": 1}}, "Additional properties are not allowed"),
    ({"VCPU": {"total": True}}, "JSON does not validate"),
])
def test_put_collection_schema(api, rp, inventories, message):
    resp = put_all(api, rp, inventories)
    assert resp.status_code == 400
    assert message in error_detail(resp)
    assert gen(rp) == 0


def test_put_collection_unknown_class(api, rp):
    resp = put_all(api, rp, {"VCPU": {"total": 1}, "custom_lower": {"total": 1}})
    assert resp.status_code == 400
    assert (f"Unknown resource class in inventory for resource provider {rp.uuid}: "
            "No such resource class custom_lower.") in error_detail(resp)
    assert gen(rp) == 0 and not Inventory.objects.exists()


@pytest.mark.parametrize("record", [{}, {"total": "x"}, 5, None, ["total"]])
def test_put_collection_unvalidated_key_is_an_unknown_class(api, rp, record):
    # The schema checks records only under ^[A-Z0-9_]+$ keys; others fail as unknown classes.
    resp = put_all(api, rp, {"VCPU": {"total": 1}, "vcpu": record})
    assert resp.status_code == 400
    assert "No such resource class vcpu." in error_detail(resp)
    assert gen(rp) == 0 and not Inventory.objects.exists()


def test_generation_sent_as_float_is_answered_as_integer(api, rp):
    resp = put_all(api, rp, {"VCPU": {"total": 1}}, generation=0.0)
    assert resp.status_code == 200
    assert resp.content.startswith(b'{"resource_provider_generation":1,')


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_constants_are_refused(api, rp, constant):
    raw = f'{{"resource_class": "VCPU", "total": 8, "allocation_ratio": {constant}}}'
    resp = api.post(url(rp), raw=raw)
    assert resp.status_code == 400
    assert "Malformed JSON" in error_detail(resp)
    assert not Inventory.objects.exists()


@pytest.mark.parametrize("version,reserved,status", [
    ("1.25", 9, 200), ("1.25", 10, 400), ("1.26", 10, 200), ("1.26", 11, 400)])
def test_capacity_validation_by_version(api, rp, version, reserved, status):
    resp = put_all(api, rp, {"VCPU": {"total": 10, "reserved": reserved}}, version=version)
    assert resp.status_code == status
    if status == 400:
        detail = error_detail(resp)
        assert f"Unable to update inventory for resource provider {rp.uuid}: " in detail
        assert f"Invalid inventory for 'VCPU' on resource provider '{rp.uuid}'." in detail
        expected = ("greater than or equal to total." if version == "1.25"
                    else "greater than total.")
        assert expected in detail


def test_zero_allocation_ratio_and_unit_order_not_cross_validated(api, rp):
    assert put_all(api, rp, {"VCPU": {"total": 4, "allocation_ratio": 0.0}},
                   version="1.25").status_code == 400
    resp = put_all(api, rp, {"VCPU": {"total": 4, "min_unit": 8, "max_unit": 6}})
    assert resp.status_code == 200


def test_put_collection_removing_used_class(api, rp):
    put_all(api, rp, {"VCPU": {"total": 8}, "DISK_GB": {"total": 8}})
    allocate(make_consumer(), rp, VCPU=1)
    resp = put_all(api, rp, {"DISK_GB": {"total": 8}})
    assert resp.status_code == 409
    assert error_code(resp) == "placement.inventory.inuse"
    assert f"update conflict: Inventory for 'VCPU' on resource provider '{rp.uuid}' in use." in (
        error_detail(resp))
    assert gen(rp) == 2  # the PUT, then the allocation; the refused PUT left it
    # lowering below usage is allowed
    assert put_all(api, rp, {"VCPU": {"total": 1, "reserved": 0}}).status_code == 200


def test_post_one(api, rp):
    resp = api.post(url(rp), {"resource_class": "DISK_GB", **FULL}, version="1.15")
    assert resp.status_code == 201
    assert resp["Location"] == f"http://testserver{url(rp, 'DISK_GB')}"
    assert resp.json() == {"resource_provider_generation": 1, **FULL}
    assert resp["Cache-Control"] == "no-cache"
    # POST ignores the generation (Quirk)
    resp = api.post(url(rp), {"resource_class": "VCPU", "total": 1,
                              "resource_provider_generation": 99})
    assert resp.status_code == 201
    assert resp.json()["resource_provider_generation"] == 2


def test_post_errors(api, rp):
    resp = api.post(url(rp), {"resource_class": "VCPU", "total": 1, "reserved": 2})
    assert resp.status_code == 400
    assert f"Unable to create inventory for resource provider {rp.uuid}: Invalid inventory" in (
        error_detail(resp))
    resp = api.post(url(rp), {"resource_class": "CUSTOM_NOPE", "total": 1})
    assert resp.status_code == 400
    assert "No such resource class CUSTOM_NOPE." in error_detail(resp)
    resp = api.post(url(rp), {"resource_class": "vcpu", "total": 1})
    assert resp.status_code == 400 and "does not match" in error_detail(resp)
    assert api.post(url(rp), {"total": 1}).status_code == 400
    api.post(url(rp), {"resource_class": "VCPU", "total": 1})
    resp = api.post(url(rp), {"resource_class": "VCPU", "total": 2})
    assert resp.status_code == 409
    assert error_code(resp) == "placement.concurrent_update"
    assert gen(rp) == 1


def test_get_one(api, rp):
    put_all(api, rp, {"VCPU": {"total": 8, "allocation_ratio": 16}})
    resp = api.get(url(rp, "VCPU"), version="1.15")
    assert resp.json() == {"resource_provider_generation": 1, "total": 8, "reserved": 0,
                           "min_unit": 1, "max_unit": 2147483647, "step_size": 1,
                           "allocation_ratio": 16.0}
    assert resp["Last-Modified"].endswith("GMT")
    for rc in ("DISK_GB", "NOPE"):
        resp = api.get(url(rp, rc))
        assert resp.status_code == 404
        assert f"No inventory of class {rc} for {rp.uuid}" in error_detail(resp)


def test_put_one(api, rp):
    put_all(api, rp, {"VCPU": {"total": 8}})
    resp = api.put(url(rp, "VCPU"), {"resource_provider_generation": 1, "total": 16,
                                     "reserved": 2})
    assert resp.status_code == 200
    assert resp.json()["resource_provider_generation"] == 2
    assert resp.json()["total"] == 16 and resp.json()["reserved"] == 2
    assert Inventory.objects.get().total == 16


def test_put_one_errors_in_order(api, rp):
    put_all(api, rp, {"VCPU": {"total": 8}})
    resp = api.put(url(rp, "VCPU"), {"total": 16})
    assert resp.status_code == 400  # generation is required
    resp = api.put(url(rp, "VCPU"), {"resource_provider_generation": 0, "total": 1,
                                     "reserved": 5})
    assert resp.status_code == 409  # generation before capacity
    resp = api.put(url(rp, "NOPE"), {"resource_provider_generation": 1, "total": 1,
                                     "reserved": 5})
    assert resp.status_code == 400  # capacity before class
    resp = api.put(url(rp, "NOPE"), {"resource_provider_generation": 1, "total": 1})
    assert resp.status_code == 404
    assert "No such resource class NOPE." in error_detail(resp)
    resp = api.put(url(rp, "DISK_GB"), {"resource_provider_generation": 1, "total": 1})
    assert resp.status_code == 400
    assert "No inventory of class DISK_GB found." in error_detail(resp)
    assert gen(rp) == 1


def test_delete_one(api, rp):
    put_all(api, rp, {"VCPU": {"total": 8}, "DISK_GB": {"total": 8}})
    consumer = make_consumer()
    allocate(consumer, rp, VCPU=1)
    resp = api.delete(url(rp, "VCPU"))
    assert resp.status_code == 409
    assert error_code(resp) == "placement.concurrent_update"  # Quirk
    assert (f"Unable to delete inventory of class VCPU: Inventory for 'VCPU' on resource "
            f"provider '{rp.uuid}' in use.") in error_detail(resp)
    assert api.delete(url(rp, "DISK_GB")).status_code == 204
    assert gen(rp) == 3  # the PUT, the allocation, the delete
    resp = api.delete(url(rp, "DISK_GB"))
    assert resp.status_code == 404
    assert ("No inventory of class DISK_GB found for delete: "
            "No inventory of class DISK_GB found for delete  ") in error_detail(resp)
    resp = api.delete(url(rp, "NOPE"))
    assert "No inventory of class NOPE found for delete: No such resource class NOPE." in (
        error_detail(resp))


def test_delete_all(api, rp):
    resp = api.delete(url(rp), version="1.4")
    assert resp.status_code == 405
    assert "Allow" not in resp.headers
    assert api.delete(url(rp), version="1.5").status_code == 204
    assert gen(rp) == 1  # bumped even without inventory
    put_all(api, rp, {"VCPU": {"total": 8}, "DISK_GB": {"total": 8}})
    allocate(make_consumer(), rp, VCPU=1, DISK_GB=1)
    resp = api.delete(url(rp))
    assert resp.status_code == 409
    assert error_code(resp) == "placement.inventory.inuse"
    assert f"Inventory for 'VCPU, DISK_GB' on resource provider '{rp.uuid}' in use." in (
        error_detail(resp))
    assert Inventory.objects.count() == 2


def test_routes_and_media(api, rp):
    resp = api.request("PATCH", url(rp))
    assert resp["Allow"] == "GET, POST, PUT, DELETE"
    assert api.request("POST", url(rp, "VCPU"))["Allow"] == "GET, PUT, DELETE"
    assert api.put(url(rp), raw="{}", content_type="text/plain").status_code == 415
    assert api.get(url(rp), headers={"Accept": "text/plain"}).status_code == 406
    assert api.put(url(rp), raw="{bad").status_code == 400


def test_unknown_provider_is_404_before_the_body_is_read(api):
    base = "/resource_providers/nope/inventories"
    for method, path in [("POST", base), ("PUT", base), ("DELETE", base),
                         ("GET", base + "/VCPU"), ("PUT", base + "/VCPU"),
                         ("DELETE", base + "/VCPU")]:
        resp = api.request(method, path, raw="{bad")
        assert resp.status_code == 404, (method, path)
        assert "No resource provider with uuid nope found" in error_detail(resp)


def test_writes_echo_the_submitted_ratio_reads_give_a_float(api, rp):
    resp = put_all(api, rp, {"VCPU": {"total": 8, "allocation_ratio": 16}})
    assert resp.json()["inventories"]["VCPU"]["allocation_ratio"] == 16
    assert isinstance(resp.json()["inventories"]["VCPU"]["allocation_ratio"], int)
    resp = api.put(url(rp, "VCPU"), {"resource_provider_generation": 1, "total": 8,
                                     "allocation_ratio": 2})
    assert isinstance(resp.json()["allocation_ratio"], int)
    resp = api.get(url(rp, "VCPU"))
    assert resp.json()["allocation_ratio"] == 2.0
    assert isinstance(resp.json()["allocation_ratio"], float)


@pytest.mark.parametrize("version,reserved,status", [
    ("1.25", 9, 201), ("1.25", 10, 400), ("1.26", 10, 201), ("1.26", 11, 400)])
def test_post_capacity_by_version_and_before_the_class(api, rp, version, reserved, status):
    resp = api.post(url(rp), {"resource_class": "VCPU", "total": 10, "reserved": reserved},
                    version=version)
    assert resp.status_code == status
    resp = api.post(url(rp), {"resource_class": "CUSTOM_NOPE", "total": 10, "reserved": 11},
                    version=version)
    assert "Invalid inventory for 'CUSTOM_NOPE'" in error_detail(resp)


@pytest.mark.parametrize("version,reserved,status", [
    ("1.25", 10, 400), ("1.26", 10, 200), ("1.26", 11, 400)])
def test_put_one_capacity_by_version(api, rp, version, reserved, status):
    put_all(api, rp, {"VCPU": {"total": 8}})
    resp = api.put(url(rp, "VCPU"), {"resource_provider_generation": 1, "total": 10,
                                     "reserved": reserved}, version=version)
    assert resp.status_code == status
    if status == 400:
        assert f"Unable to update inventory for resource provider {rp.uuid}: " in (
            error_detail(resp))
