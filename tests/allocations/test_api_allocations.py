"""PUT/GET/DELETE /allocations/{consumer_uuid} and POST /allocations through the HTTP API."""
import uuid as uuidlib

import pytest

from allocations.models import Allocation, Consumer, ConsumerType, Project
from providers.models import ResourceProvider
from tests.conftest import error_code, error_detail
from tests.factories import allocate, make_consumer, make_provider, set_inventory

PROJECT = "proj-a"
USER = "user-a"


def new_uuid():
    return str(uuidlib.uuid4())


def gen(rp):
    return ResourceProvider.objects.get(pk=rp.pk).generation


def body(allocs, generation=None, consumer_type="INSTANCE", project=PROJECT, user=USER,
         **extra):
    data = {"allocations": {rp.uuid: {"resources": res} for rp, res in allocs},
            "project_id": project, "user_id": user, "consumer_generation": generation,
            "consumer_type": consumer_type}
    data.update(extra)
    return data


@pytest.fixture
def rp(db):
    return make_provider("cn1", inventory={"VCPU": 8, "MEMORY_MB": {"total": 1024},
                                           "DISK_GB": {"total": 100, "min_unit": 10,
                                                       "max_unit": 50, "step_size": 10}})


@pytest.fixture
def rp2(db):
    return make_provider("cn2", inventory={"VCPU": 4, "DISK_GB": 200})


# --- GET -----------------------------------------------------------------------------


def test_get_unknown_consumer_is_empty_not_404(api):
    resp = api.get(f"/allocations/{new_uuid()}")
    assert resp.status_code == 200
    assert resp.json() == {"allocations": {}}
    assert resp["Cache-Control"] == "no-cache"
    assert resp["Last-Modified"].endswith("GMT")


def test_get_shapes_per_microversion(api, rp, rp2):
    consumer = new_uuid()
    assert api.put(f"/allocations/{consumer}",
                   body([(rp, {"VCPU": 2}), (rp2, {"DISK_GB": 5})])).status_code == 204
    full = api.get(f"/allocations/{consumer}").json()
    assert full == {
        "allocations": {
            rp.uuid: {"generation": gen(rp), "resources": {"VCPU": 2}},
            rp2.uuid: {"generation": gen(rp2), "resources": {"DISK_GB": 5}},
        },
        "consumer_generation": 1, "consumer_type": "INSTANCE",
        "project_id": PROJECT, "user_id": USER,
    }
    old = api.get(f"/allocations/{consumer}", version="1.11")
    assert set(old.json()) == {"allocations"}
    assert "Last-Modified" not in old and "Cache-Control" not in old
    assert set(api.get(f"/allocations/{consumer}", version="1.12").json()) == {
        "allocations", "project_id", "user_id"}
    assert set(api.get(f"/allocations/{consumer}", version="1.28").json()) == {
        "allocations", "project_id", "user_id", "consumer_generation"}


def test_get_untyped_consumer_reports_unknown(api, rp):
    consumer = make_consumer()
    allocate(consumer, rp, VCPU=1)
    assert api.get(f"/allocations/{consumer.uuid}").json()["consumer_type"] == "unknown"


def test_get_requires_json_accept_and_policy(api, rp):
    resp = api.get(f"/allocations/{new_uuid()}", headers={"Accept": "text/plain"})
    assert resp.status_code == 406
    assert api.get(f"/allocations/{new_uuid()}", token="user").status_code == 403


# --- PUT: bodies per microversion --------------------------------------------------


def test_put_list_format_before_1_8_uses_incomplete_consumer_ids(api, rp, settings):
    consumer = new_uuid()
    resp = api.put(f"/allocations/{consumer}", {"allocations": [
        {"resource_provider": {"uuid": rp.uuid}, "resources": {"VCPU": 1}},
        {"resource_provider": {"uuid": rp.uuid}, "resources": {"VCPU": 3}},
    ]}, version="1.0")
    assert resp.status_code == 204
    got = api.get(f"/allocations/{consumer}", version="1.12").json()
    assert got["allocations"][rp.uuid]["resources"] == {"VCPU": 3}  # later entry wins
    assert got["project_id"] == settings.PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID
    assert got["user_id"] == settings.PLACEMENT_INCOMPLETE_CONSUMER_USER_ID


def test_put_1_0_rejects_project_id(api, rp):
    resp = api.put(f"/allocations/{new_uuid()}", {"allocations": [
        {"resource_provider": {"uuid": rp.uuid}, "resources": {"VCPU": 1}}],
        "project_id": "p", "user_id": "u"}, version="1.7")
    assert resp.status_code == 400
    assert "JSON does not validate" in error_detail(resp)


def test_put_1_8_requires_project_and_user(api, rp):
    allocs = [{"resource_provider": {"uuid": rp.uuid}, "resources": {"VCPU": 1}}]
    resp = api.put(f"/allocations/{new_uuid()}", {"allocations": allocs, "project_id": "p"},
                   version="1.8")
    assert resp.status_code == 400
    assert "'user_id' is a required property" in error_detail(resp)
    consumer = new_uuid()
    assert api.put(f"/allocations/{consumer}", {"allocations": allocs, "project_id": "p",
                                                "user_id": "u"}, version="1.8").status_code == 204
    assert api.get(f"/allocations/{consumer}", version="1.12").json()["project_id"] == "p"


def test_put_pre_1_8_reassigns_existing_consumer_to_incomplete_ids(api, rp, settings):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1})]))
    allocs = [{"resource_provider": {"uuid": rp.uuid}, "resources": {"VCPU": 1}}]
    assert api.put(f"/allocations/{consumer}", {"allocations": allocs},
                   version="1.7").status_code == 204
    got = api.get(f"/allocations/{consumer}").json()
    assert got["project_id"] == settings.PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID
    assert got["consumer_type"] == "INSTANCE"  # pre-1.38 writes keep the type
    assert got["consumer_generation"] == 2


def test_put_dict_format_from_1_12(api, rp):
    consumer = new_uuid()
    data = {"allocations": {rp.uuid: {"resources": {"VCPU": 1}, "generation": 99}},
            "project_id": "p", "user_id": "u"}
    assert api.put(f"/allocations/{consumer}", data, version="1.12").status_code == 204
    assert api.put(f"/allocations/{consumer}", data, version="1.11").status_code == 400
    # provider generation in the body is ignored, not a compare-and-swap token
    assert api.put(f"/allocations/{consumer}", data, version="1.27").status_code == 204


@pytest.mark.parametrize("version,allocations,fragment", [
    ("1.12", {}, "JSON does not validate"),
    ("1.27", {}, "JSON does not validate"),
    ("1.39", None, "'allocations' is a required property"),
])
def test_put_schema_errors(api, rp, version, allocations, fragment):
    data = {"project_id": "p", "user_id": "u", "consumer_generation": None,
            "consumer_type": "X"}
    if version < "1.28":
        data = {"project_id": "p", "user_id": "u"}
    if allocations is not None:
        data["allocations"] = allocations
    resp = api.put(f"/allocations/{new_uuid()}", data, version=version)
    assert resp.status_code == 400
    assert fragment in error_detail(resp)


@pytest.mark.parametrize("resources,fragment", [
    ({"VCPU": 0}, "0 is less than the minimum of 1"),
    ({"vcpu": 1}, "does not match any of the regexes"),
    ({}, "JSON does not validate"),
])
def test_put_bad_resources(api, rp, resources, fragment):
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, resources)]))
    assert resp.status_code == 400
    assert fragment in error_detail(resp)


def test_put_non_uuid_provider_key(api, rp):
    data = body([(rp, {"VCPU": 1})])
    data["allocations"] = {"not-a-uuid": {"resources": {"VCPU": 1}}}
    resp = api.put(f"/allocations/{new_uuid()}", data)
    assert resp.status_code == 400
    assert "does not match any of the regexes" in error_detail(resp)


def test_put_malformed_consumer_uuid(api, rp):
    resp = api.put("/allocations/not-a-uuid", body([(rp, {"VCPU": 1})]))
    assert resp.status_code == 400
    assert "Malformed consumer_uuid: not-a-uuid" in error_detail(resp)


def test_put_normalizes_consumer_uuid(api, rp):
    resp = api.put("/allocations/75D0F5F775D9458CB204F90AC91604EC", body([(rp, {"VCPU": 1})]))
    assert resp.status_code == 204
    assert Consumer.objects.filter(uuid="75d0f5f7-75d9-458c-b204-f90ac91604ec").exists()
    got = api.get("/allocations/75d0f5f7-75d9-458c-b204-f90ac91604ec").json()
    assert got["allocations"][rp.uuid]["resources"] == {"VCPU": 1}


def test_put_checks_content_type_then_policy(api, rp):
    resp = api.put(f"/allocations/{new_uuid()}", raw="{}", content_type="text/plain")
    assert resp.status_code == 415
    assert "The media type text/plain is not supported" in error_detail(resp)
    resp = api.put("/allocations/bad", body([(rp, {"VCPU": 1})]), token="user")
    assert resp.status_code == 403


def test_put_consumer_type_rules_1_38(api, rp):
    data = body([(rp, {"VCPU": 1})])
    del data["consumer_type"]
    resp = api.put(f"/allocations/{new_uuid()}", data)
    assert resp.status_code == 400
    assert "'consumer_type' is a required property" in error_detail(resp)
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 1})],
                                                      consumer_type="instance"))
    assert resp.status_code == 400
    assert "'instance' does not match '^[A-Z0-9_]+$'" in error_detail(resp)
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 1})]), version="1.37")
    assert resp.status_code == 400
    assert "'consumer_type' was unexpected" in error_detail(resp)


def test_put_consumer_type_replaced_and_created(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1})], consumer_type="INSTANCE"))
    assert api.put(f"/allocations/{consumer}",
                   body([(rp, {"VCPU": 1})], generation=1,
                        consumer_type="MIGRATION")).status_code == 204
    assert api.get(f"/allocations/{consumer}").json()["consumer_type"] == "MIGRATION"
    assert set(ConsumerType.objects.values_list("name", flat=True)) >= {"INSTANCE",
                                                                        "MIGRATION"}


def test_put_mappings_from_1_34(api, rp):
    mappings = {"": [rp.uuid], "group_1": [rp.uuid]}
    data = body([(rp, {"VCPU": 1})], mappings=mappings)
    assert api.put(f"/allocations/{new_uuid()}", data).status_code == 204
    del data["consumer_type"]
    resp = api.put(f"/allocations/{new_uuid()}", data, version="1.33")
    assert resp.status_code == 400
    assert "Additional properties are not allowed" in error_detail(resp)
    data = body([(rp, {"VCPU": 1})], mappings={"group_1": ["not-a-uuid"]})
    assert api.put(f"/allocations/{new_uuid()}", data).status_code == 400
    data = body([(rp, {"VCPU": 1})], mappings={"group_1": []})
    assert api.put(f"/allocations/{new_uuid()}", data).status_code == 400


# --- PUT: consumer generations ---------------------------------------------------------


def test_consumer_generation_worked_example(api, rp):
    consumer = new_uuid()
    path = f"/allocations/{consumer}"
    data = body([(rp, {"VCPU": 1})], version="1.28")
    data.pop("consumer_type")
    data.pop("version")
    no_gen = dict(data)
    del no_gen["consumer_generation"]
    resp = api.put(path, no_gen, version="1.28")
    assert resp.status_code == 400
    resp = api.put(path, dict(data, consumer_generation=5), version="1.28")
    assert resp.status_code == 409
    assert error_code(resp) == "placement.concurrent_update"
    assert "consumer generation conflict - expected null but got 5" in error_detail(resp)
    assert api.put(path, data, version="1.28").status_code == 204
    resp = api.put(path, data, version="1.28")
    assert resp.status_code == 409
    assert "consumer generation conflict - expected 1 but got None" in error_detail(resp)
    assert api.put(path, dict(data, consumer_generation=1), version="1.28").status_code == 204
    assert api.get(path).json()["consumer_generation"] == 2
    cleared = dict(data, consumer_generation=2, allocations={})
    before = gen(rp)
    assert api.put(path, cleared, version="1.28").status_code == 204
    assert api.get(path).json() == {"allocations": {}}
    assert not Consumer.objects.filter(uuid=consumer).exists()
    assert gen(rp) == before + 1  # the provider lost allocations of a cleared consumer
    assert api.put(path, data, version="1.28").status_code == 204  # null again


def test_empty_allocations_for_new_consumer_leaves_no_consumer(api, rp):
    consumer = new_uuid()
    resp = api.put(f"/allocations/{consumer}", body([]))
    assert resp.status_code == 204
    assert not Consumer.objects.filter(uuid=consumer).exists()
    assert api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1})])).status_code == 204


def test_generation_is_not_checked_below_1_28(api, rp):
    consumer = new_uuid()
    data = {"allocations": {rp.uuid: {"resources": {"VCPU": 1}}}, "project_id": "p",
            "user_id": "u"}
    for _ in range(3):
        assert api.put(f"/allocations/{consumer}", data, version="1.27").status_code == 204
    assert Consumer.objects.get(uuid=consumer).generation == 3


# --- PUT: provider/class existence, capacity and constraints ----------------------------


def test_put_unknown_provider_writes_nothing(api, rp):
    consumer = new_uuid()
    missing = new_uuid()
    data = body([(rp, {"VCPU": 1})])
    data["allocations"][missing] = {"resources": {"VCPU": 1}}
    resp = api.put(f"/allocations/{consumer}", data)
    assert resp.status_code == 400
    assert f"Allocation for resource provider '{missing}' that does not exist." in \
        error_detail(resp)
    assert not Consumer.objects.filter(uuid=consumer).exists()
    assert not Project.objects.filter(external_id=PROJECT).exists()
    # The upstream defect is not reproduced: null is accepted afterwards.
    assert api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1})])).status_code == 204


def test_put_unknown_resource_class(api, rp):
    consumer = new_uuid()
    resp = api.put(f"/allocations/{consumer}", body([(rp, {"CUSTOM_PONY": 1})]))
    assert resp.status_code == 400
    assert (f"Unable to allocate inventory for consumer {consumer}: "
            "No such resource class CUSTOM_PONY.") in error_detail(resp)


def test_put_class_without_inventory(api, rp):
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"PCI_DEVICE": 1})]))
    assert resp.status_code == 409
    assert error_code(resp) == "placement.undefined_code"
    assert (f"Unable to allocate inventory: Inventory for 'PCI_DEVICE' on resource "
            f"provider '{rp.uuid}' invalid.") in error_detail(resp)


def test_put_provider_without_any_inventory(api, rp):
    empty = make_provider("empty")
    resp = api.put(f"/allocations/{new_uuid()}",
                   body([(rp, {"VCPU": 1}), (empty, {"VCPU": 1})]))
    assert resp.status_code == 409
    assert f"Inventory for 'VCPU' on resource provider '{empty.uuid}' invalid." in \
        error_detail(resp)


@pytest.mark.parametrize("amount", [5, 60, 15])
def test_put_violates_min_max_step(api, rp, amount):
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"DISK_GB": amount})]))
    assert resp.status_code == 409
    assert (f"Unable to create allocation for 'DISK_GB' on resource provider '{rp.uuid}'. "
            "The requested amount would violate inventory constraints.") in error_detail(resp)


def test_put_exceeds_capacity(api, rp):
    assert api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 6})])).status_code == 204
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 3})]))
    assert resp.status_code == 409
    assert error_code(resp) == "placement.undefined_code"
    assert (f"Unable to create allocation for 'VCPU' on resource provider '{rp.uuid}'. "
            "The requested amount would exceed the capacity.") in error_detail(resp)
    assert api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 2})])).status_code == 204


def test_capacity_uses_reserved_and_allocation_ratio(api):
    rp = make_provider("ratio", inventory={"VCPU": {"total": 4, "reserved": 1,
                                                    "allocation_ratio": 2.5}})
    # capacity = (4 - 1) * 2.5 = 7.5
    assert api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 7})])).status_code == 204
    assert api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 1})])).status_code == 409


def test_replacing_own_allocation_does_not_count_twice(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 6})]))
    resp = api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 8})], generation=1))
    assert resp.status_code == 204


def test_existing_overcommit_may_shrink_but_not_grow(api, rp):
    holder = make_consumer(project=PROJECT, user=USER)
    set_inventory(rp, {"VCPU": 10})
    allocate(holder, rp, VCPU=10)
    set_inventory(rp, {"VCPU": 8})  # lowered below usage: over capacity 8
    path = f"/allocations/{holder.uuid}"
    assert api.put(path, body([(rp, {"VCPU": 11})], generation=1)).status_code == 409
    assert api.put(path, body([(rp, {"VCPU": 9})], generation=1)).status_code == 204
    assert api.put(path, body([(rp, {"VCPU": 9})], generation=2)).status_code == 204
    other = f"/allocations/{new_uuid()}"
    assert api.put(other, body([(rp, {"VCPU": 1})])).status_code == 409


def test_failed_capacity_write_keeps_previous_allocations(api, rp, rp2):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 2})]))
    before = (gen(rp), gen(rp2))
    resp = api.put(f"/allocations/{consumer}",
                   body([(rp, {"VCPU": 1}), (rp2, {"VCPU": 5})], generation=1))
    assert resp.status_code == 409
    got = api.get(f"/allocations/{consumer}").json()
    assert got["allocations"] == {rp.uuid: {"generation": before[0],
                                            "resources": {"VCPU": 2}}}
    assert got["consumer_generation"] == 1
    assert (gen(rp), gen(rp2)) == before


# --- generations of providers ----------------------------------------------------------


def test_provider_generation_effects(api, rp, rp2):
    consumer = new_uuid()
    g1, g2 = gen(rp), gen(rp2)
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1})]))
    assert (gen(rp), gen(rp2)) == (g1 + 1, g2)
    # moving elsewhere: only the provider named in the new allocations is bumped (Quirk)
    api.put(f"/allocations/{consumer}", body([(rp2, {"VCPU": 1})], generation=1))
    assert (gen(rp), gen(rp2)) == (g1 + 1, g2 + 1)
    # DELETE bumps nothing (Quirk)
    assert api.delete(f"/allocations/{consumer}").status_code == 204
    assert (gen(rp), gen(rp2)) == (g1 + 1, g2 + 1)


# --- DELETE -------------------------------------------------------------------------


def test_delete(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1})]))
    resp = api.delete(f"/allocations/{consumer}")
    assert resp.status_code == 204
    assert not Consumer.objects.filter(uuid=consumer).exists()
    assert not Allocation.objects.exists()
    resp = api.delete(f"/allocations/{consumer}")
    assert resp.status_code == 404
    assert f"No allocations for consumer '{consumer}'" in error_detail(resp)
    assert api.delete(f"/allocations/{new_uuid()}", token="user").status_code == 403


def test_methods(api):
    resp = api.request("PATCH", f"/allocations/{new_uuid()}")
    assert resp.status_code == 405
    assert resp["Allow"] == "GET, PUT, DELETE"
    resp = api.get("/allocations")
    assert resp.status_code == 405
    assert resp["Allow"] == "POST"


# --- POST /allocations -------------------------------------------------------------


def test_post_requires_1_13(api, rp):
    resp = api.post("/allocations", {}, version="1.12")
    assert resp.status_code == 404


def test_post_many_consumers_and_move(api, rp, rp2):
    instance, migration = new_uuid(), new_uuid()
    api.put(f"/allocations/{instance}", body([(rp, {"VCPU": 2})]))
    g1, g2 = gen(rp), gen(rp2)
    resp = api.post("/allocations", {
        migration: body([(rp, {"VCPU": 2})], consumer_type="MIGRATION"),
        instance: body([(rp2, {"VCPU": 2})], generation=1),
    })
    assert resp.status_code == 204
    assert api.get(f"/allocations/{migration}").json()["allocations"][rp.uuid][
        "resources"] == {"VCPU": 2}
    assert api.get(f"/allocations/{instance}").json()["consumer_generation"] == 2
    assert (gen(rp), gen(rp2)) == (g1 + 1, g2 + 1)
    # clear the migration with an empty allocations object
    resp = api.post("/allocations", {migration: body([], generation=1,
                                                     consumer_type="MIGRATION")})
    assert resp.status_code == 204
    assert api.get(f"/allocations/{migration}").json() == {"allocations": {}}
    assert gen(rp) == g1 + 2


def test_post_capacity_counts_all_consumers_and_is_all_or_nothing(api, rp):
    a, b = new_uuid(), new_uuid()
    resp = api.post("/allocations", {a: body([(rp, {"VCPU": 5})]),
                                     b: body([(rp, {"VCPU": 4})])})
    assert resp.status_code == 409
    assert "would exceed the capacity" in error_detail(resp)
    assert not Consumer.objects.exists()
    assert not Allocation.objects.exists()


def test_post_generation_conflict_second_consumer_rolls_back(api, rp):
    a, b = new_uuid(), new_uuid()
    resp = api.post("/allocations", {a: body([(rp, {"VCPU": 1})]),
                                     b: body([(rp, {"VCPU": 1})], generation=3)})
    assert resp.status_code == 409
    assert error_code(resp) == "placement.concurrent_update"
    assert "expected null but got 3" in error_detail(resp)
    assert not Consumer.objects.exists()


def test_post_unknown_class_message(api, rp):
    resp = api.post("/allocations", {new_uuid(): body([(rp, {"CUSTOM_COWS": 1})])})
    assert resp.status_code == 400
    assert "Unable to allocate inventory No such resource class CUSTOM_COWS." in \
        error_detail(resp)


def test_post_schema(api, rp):
    resp = api.post("/allocations", {})
    assert resp.status_code == 400
    assert "JSON does not validate" in error_detail(resp)
    resp = api.post("/allocations", {"not-a-uuid": body([(rp, {"VCPU": 1})])})
    assert resp.status_code == 400
    data = body([(rp, {"VCPU": 1})])
    del data["consumer_generation"]
    del data["consumer_type"]
    assert api.post("/allocations", {new_uuid(): data}, version="1.27").status_code == 204
    assert api.post("/allocations", {new_uuid(): data}, version="1.28").status_code == 400


def test_post_keys_are_not_normalized(api, rp):
    upper = str(uuidlib.uuid4()).upper()
    assert api.post("/allocations", {upper: body([(rp, {"VCPU": 1})])}).status_code == 204
    assert Consumer.objects.filter(uuid=upper).exists()


# --- order of evaluation -------------------------------------------------------------


def test_consumer_generation_is_checked_before_provider_existence(api, rp):
    data = body([(rp, {"VCPU": 1})], generation=5)
    data["allocations"][new_uuid()] = {"resources": {"VCPU": 1}}
    resp = api.put(f"/allocations/{new_uuid()}", data)
    assert resp.status_code == 409
    assert "expected null but got 5" in error_detail(resp)


def test_provider_existence_is_checked_before_resource_classes(api, rp):
    missing = new_uuid()
    data = body([(rp, {"CUSTOM_NOPE": 1})])
    data["allocations"][missing] = {"resources": {"VCPU": 1}}
    resp = api.put(f"/allocations/{new_uuid()}", data)
    assert resp.status_code == 400
    assert "that does not exist" in error_detail(resp)


def test_post_reports_first_generation_mismatch_in_body_order(api, rp):
    a, b = new_uuid(), new_uuid()
    resp = api.post("/allocations", {a: body([(rp, {"VCPU": 1})], generation=7),
                                     b: body([(rp, {"VCPU": 1})], generation=3)})
    assert resp.status_code == 409
    assert "expected null but got 7" in error_detail(resp)


def test_post_checks_all_generations_before_provider_existence(api, rp):
    missing = new_uuid()
    a, b = new_uuid(), new_uuid()
    first = body([(rp, {"VCPU": 1})])
    first["allocations"][missing] = {"resources": {"VCPU": 1}}
    resp = api.post("/allocations", {a: first, b: body([(rp, {"VCPU": 1})], generation=2)})
    assert resp.status_code == 409
    resp = api.post("/allocations", {a: first, b: body([(rp, {"VCPU": 1})])})
    assert resp.status_code == 400
    assert f"Allocation for resource provider '{missing}' that does not exist." in \
        error_detail(resp)
    assert not Consumer.objects.exists()


# --- audit additions: lifecycle, re-assignment, odd bodies ----------------------------


def test_post_1_13_empty_allocations_for_new_consumer_leaves_no_consumer(api, rp):
    consumer = new_uuid()
    resp = api.post("/allocations", {consumer: {"allocations": {}, "project_id": "p",
                                                "user_id": "u"}}, version="1.13")
    assert resp.status_code == 204
    assert not Consumer.objects.filter(uuid=consumer).exists()
    # "a consumer exists iff it has allocations": null is accepted afterwards
    assert api.post("/allocations", {consumer: body([(rp, {"VCPU": 1})])}).status_code == 204
    assert api.get(f"/allocations/{consumer}").json()["consumer_generation"] == 1


def test_post_1_13_clears_an_existing_consumer(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 2})]))
    before = gen(rp)
    resp = api.post("/allocations", {consumer: {"allocations": {}, "project_id": "p",
                                                "user_id": "u"}}, version="1.13")
    assert resp.status_code == 204
    assert api.get(f"/allocations/{consumer}").json() == {"allocations": {}}
    assert not Consumer.objects.filter(uuid=consumer).exists()
    assert gen(rp) == before + 1


def test_write_with_other_project_and_user_reassigns_consumer(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 2})], project="p1", user="u1"))
    resp = api.put(f"/allocations/{consumer}",
                   body([(rp, {"VCPU": 2})], generation=1, project="p2", user="u2"))
    assert resp.status_code == 204
    got = api.get(f"/allocations/{consumer}").json()
    assert (got["project_id"], got["user_id"]) == ("p2", "u2")
    assert api.get("/usages?project_id=p1").json() == {"usages": {}}
    assert api.get("/usages?project_id=p2&user_id=u2", version="1.9").json() == {
        "usages": {"VCPU": 2}}


@pytest.mark.parametrize("allocations,fragment", [
    ([], "[] should be non-empty"),
    ([{"resource_provider": {"uuid": "not-a-uuid"}, "resources": {"VCPU": 1}}],
     "is not a 'uuid'"),
    ([{"resource_provider": {}, "resources": {"VCPU": 1}}], "'uuid' is a required property"),
    ([{"resource_provider": {"uuid": 5}, "resources": {"VCPU": 1}}], "5 is not of type"),
    ({"x": 1}, "is not of type 'array'"),
])
def test_put_list_format_schema_errors(api, rp, allocations, fragment):
    resp = api.put(f"/allocations/{new_uuid()}", {"allocations": allocations}, version="1.7")
    assert resp.status_code == 400
    assert "JSON does not validate" in error_detail(resp)
    assert fragment in error_detail(resp)


def test_put_list_format_provider_uuid_is_looked_up_as_given(api, rp):
    # uuid-like passes the schema, but the lookup is by exact string
    undashed = rp.uuid.replace("-", "")
    resp = api.put(f"/allocations/{new_uuid()}", {"allocations": [
        {"resource_provider": {"uuid": undashed}, "resources": {"VCPU": 1}}]}, version="1.0")
    assert resp.status_code == 400
    assert f"Allocation for resource provider '{undashed}' that does not exist." in \
        error_detail(resp)


@pytest.mark.parametrize("raw", ["[]", '"x"', "5", "null", "{}"])
def test_put_and_post_non_object_bodies(api, raw):
    resp = api.put(f"/allocations/{new_uuid()}", raw=raw)
    assert resp.status_code == 400
    assert "JSON does not validate" in error_detail(resp)
    resp = api.post("/allocations", raw=raw)
    assert resp.status_code == 400
    assert "JSON does not validate" in error_detail(resp)


def test_integral_float_amount_is_an_integer(api, rp):
    consumer = new_uuid()
    assert api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 2.0})])).status_code == 204
    resources = api.get(f"/allocations/{consumer}").json()["allocations"][rp.uuid]["resources"]
    assert resources == {"VCPU": 2} and isinstance(resources["VCPU"], int)
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 2.5})]))
    assert resp.status_code == 400
    assert "2.5 is not of type 'integer'" in error_detail(resp)


@pytest.mark.parametrize("amount", [2 ** 31, 2 ** 70, 1e10])
def test_huge_amount_is_a_constraint_conflict_not_an_error(api, rp, amount):
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": amount})]))
    assert resp.status_code == 409
    assert "would violate inventory constraints" in error_detail(resp)
    assert not Allocation.objects.exists()


def test_huge_consumer_generation_is_a_conflict(api, rp):
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 1})], generation=2 ** 70))
    assert resp.status_code == 409
    assert f"expected null but got {2 ** 70}" in error_detail(resp)
    resp = api.put(f"/allocations/{new_uuid()}", body([(rp, {"VCPU": 1})], generation=1.5))
    assert resp.status_code == 400
    assert "JSON does not validate" in error_detail(resp)


def test_post_mappings_and_consumer_type_per_microversion(api, rp):
    data = body([(rp, {"VCPU": 1})], mappings={"_A": [rp.uuid]})
    assert api.post("/allocations", {new_uuid(): data}).status_code == 204
    del data["consumer_type"]
    resp = api.post("/allocations", {new_uuid(): data})
    assert resp.status_code == 400
    assert "'consumer_type' is a required property" in error_detail(resp)
    assert api.post("/allocations", {new_uuid(): data}, version="1.34").status_code == 204
    resp = api.post("/allocations", {new_uuid(): data}, version="1.33")
    assert resp.status_code == 400
    assert "'mappings' was unexpected" in error_detail(resp)
    resp = api.post("/allocations", {new_uuid(): body([(rp, {"VCPU": 1})], mappings={})})
    assert resp.status_code == 400
    assert "should be non-empty" in error_detail(resp)


def test_get_and_delete_look_up_the_consumer_uuid_as_given(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1})]))
    assert api.get(f"/allocations/{consumer.upper()}").json() == {"allocations": {}}
    resp = api.delete(f"/allocations/{consumer.upper()}")
    assert resp.status_code == 404
    assert f"No allocations for consumer '{consumer.upper()}'" in error_detail(resp)
    assert api.get(f"/allocations/{consumer}").json()["allocations"]


def test_write_responses_have_no_cache_headers(api, rp):
    consumer = new_uuid()
    for resp in (api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1})])),
                 api.post("/allocations", {new_uuid(): body([(rp, {"VCPU": 1})])}),
                 api.delete(f"/allocations/{consumer}")):
        assert resp.status_code == 204
        assert "Last-Modified" not in resp and "Cache-Control" not in resp
        assert resp.content == b""


def test_get_reads_allocations_and_consumer_in_one_statement(api, rp, rp2,
                                                             django_assert_num_queries):
    # A consumer deleted between two reads would otherwise leave rows without a consumer.
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body([(rp, {"VCPU": 1}), (rp2, {"DISK_GB": 5})]))
    with django_assert_num_queries(1):
        resp = api.get(f"/allocations/{consumer}")
    assert resp.json()["consumer_generation"] == 1
