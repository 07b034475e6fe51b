"""POST /reshaper through the whole stack (reshaper.md)."""
import uuid as uuidlib

import pytest

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from providers.models import Inventory, ResourceClass, ResourceProvider
from tests.conftest import error_code, error_detail
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db

PROJECT = "2f0c4ffc-4c4d-407a-b334-56297b871b7f"
USER = "cc8a0fe0-2b7c-4392-ae51-747bc73cf473"


def new_uuid():
    return str(uuidlib.uuid4())


def snapshot():
    """Everything a reshape may write, as comparable plain data."""
    return {
        "providers": sorted(ResourceProvider.objects.values_list(
            "uuid", "name", "generation", "parent_id", "root_id", "updated_at")),
        "inventories": sorted(Inventory.objects.values_list(
            "provider__uuid", "resource_class__name", "total", "reserved", "min_unit",
            "max_unit", "step_size", "allocation_ratio", "updated_at")),
        "allocations": sorted(Allocation.objects.values_list(
            "consumer__uuid", "provider__uuid", "resource_class__name", "used")),
        "consumers": sorted(Consumer.objects.values_list(
            "uuid", "generation", "project__external_id", "user__external_id",
            "consumer_type__name", "updated_at")),
        "projects": sorted(Project.objects.values_list("external_id", flat=True)),
        "users": sorted(User.objects.values_list("external_id", flat=True)),
        "consumer_types": sorted(ConsumerType.objects.values_list("name", flat=True)),
        "classes": sorted(ResourceClass.objects.values_list("name", flat=True)),
    }


def inventory_of(provider):
    return {inv.resource_class.name: inv.total
            for inv in Inventory.objects.filter(provider__uuid=provider.uuid)
            .select_related("resource_class")}


def allocations_of(consumer_uuid):
    return {(a.provider.uuid, a.resource_class.name): a.used
            for a in Allocation.objects.filter(consumer__uuid=consumer_uuid)
            .select_related("provider", "resource_class")}


def generation(provider):
    return ResourceProvider.objects.get(uuid=provider.uuid).generation


def consumer_body(allocations, generation_, consumer_type="INSTANCE", **extra):
    body = {"allocations": {rp.uuid: {"resources": res} for rp, res in allocations.items()},
            "project_id": PROJECT, "user_id": USER, "consumer_generation": generation_}
    if consumer_type is not None:
        body["consumer_type"] = consumer_type
    body.update(extra)
    return body


def inv(provider, records, gen=None):
    return {provider.uuid: {
        "resource_provider_generation": generation(provider) if gen is None else gen,
        "inventories": records}}


@pytest.fixture
def compute_with_vgpus():
    """A compute node with VCPU and 4 VGPU, and two instances using VGPU there."""
    cn = make_provider("cn1", inventory={"VCPU": 16, "VGPU": 4})
    first = make_consumer(project=PROJECT, user=USER, consumer_type="INSTANCE")
    second = make_consumer(project=PROJECT, user=USER, consumer_type="INSTANCE")
    allocate(first, cn, VCPU=2, VGPU=1)
    allocate(second, cn, VCPU=4, VGPU=2)
    return cn, first, second


# --- use cases ----------------------------------------------------------------------

def test_vgpu_moves_to_new_per_gpu_children_with_its_allocations(api, compute_with_vgpus):
    cn, first, second = compute_with_vgpus
    gpu0 = make_provider("cn1_pgpu0", parent=cn)
    gpu1 = make_provider("cn1_pgpu1", parent=cn)
    body = {
        "inventories": {
            **inv(cn, {"VCPU": {"total": 16}}),
            **inv(gpu0, {"VGPU": {"total": 2}}),
            **inv(gpu1, {"VGPU": {"total": 2}}),
        },
        "allocations": {
            first.uuid: consumer_body({cn: {"VCPU": 2}, gpu0: {"VGPU": 1}}, 1),
            second.uuid: consumer_body({cn: {"VCPU": 4}, gpu1: {"VGPU": 2}}, 1),
        },
    }
    resp = api.post("/reshaper", body)
    assert resp.status_code == 204, resp.content
    assert resp.content == b""
    assert inventory_of(cn) == {"VCPU": 16}
    assert inventory_of(gpu0) == {"VGPU": 2}
    assert inventory_of(gpu1) == {"VGPU": 2}
    assert allocations_of(first.uuid) == {(cn.uuid, "VCPU"): 2, (gpu0.uuid, "VGPU"): 1}
    assert allocations_of(second.uuid) == {(cn.uuid, "VCPU"): 4, (gpu1.uuid, "VGPU"): 2}
    # interim (+1, non-empty) + allocations (+1) + final (+1); cn was at 3 (its
    # inventory and two allocation writes)
    assert [generation(p) for p in (cn, gpu0, gpu1)] == [6, 3, 3]
    assert Consumer.objects.get(uuid=first.uuid).generation == 2
    # what the API reports afterwards agrees
    usages = api.get(f"/resource_providers/{gpu1.uuid}/usages").json()
    assert usages["usages"] == {"VGPU": 2}


def test_custom_class_renamed_to_standard_name(api):
    ResourceClass.objects.create(name="CUSTOM_FPGA_ACCEL")
    cn = make_provider("cn1", inventory={"VCPU": 8, "CUSTOM_FPGA_ACCEL": 2})
    consumer = make_consumer(project=PROJECT, user=USER, consumer_type="INSTANCE")
    allocate(consumer, cn, VCPU=1, CUSTOM_FPGA_ACCEL=1)
    body = {
        "inventories": inv(cn, {"VCPU": {"total": 8}, "FPGA": {"total": 2}}),
        "allocations": {consumer.uuid: consumer_body({cn: {"VCPU": 1, "FPGA": 1}}, 1)},
    }
    resp = api.post("/reshaper", body)
    assert resp.status_code == 204, resp.content
    assert inventory_of(cn) == {"VCPU": 8, "FPGA": 2}
    assert allocations_of(consumer.uuid) == {(cn.uuid, "VCPU"): 1, (cn.uuid, "FPGA"): 1}
    assert generation(cn) == 5  # 2 (inventory, allocation) + interim, allocations, final
    # the custom class is now unused and can be deleted
    assert api.delete("/resource_classes/CUSTOM_FPGA_ACCEL").status_code == 204


def test_generation_example_of_the_spec_there_and_back(api):
    parent = make_provider("P", inventory={"VCPU": 8, "DISK_GB": 100})
    child = make_provider("C", parent=parent)
    a = make_consumer(project=PROJECT, user=USER, consumer_type="INSTANCE")
    b = make_consumer(project=PROJECT, user=USER, consumer_type="INSTANCE")
    allocate(a, parent, VCPU=2, DISK_GB=10)
    allocate(b, parent, DISK_GB=20)
    # the spec's example starts with P at generation 5 (here 3: inventory, two allocations)
    ResourceProvider.objects.filter(pk=parent.pk).update(generation=5)
    resp = api.post("/reshaper", {
        "inventories": {**inv(parent, {"DISK_GB": {"total": 100}}, gen=5),
                        **inv(child, {"VCPU": {"total": 8}}, gen=0)},
        "allocations": {
            a.uuid: consumer_body({child: {"VCPU": 2}, parent: {"DISK_GB": 10}}, 1),
            b.uuid: consumer_body({parent: {"DISK_GB": 20}}, 1),
        },
    })
    assert resp.status_code == 204, resp.content
    assert (generation(parent), generation(child)) == (8, 3)

    # Back: C's inventory {} and one consumer's C allocations cleared with {}.
    resp = api.post("/reshaper", {
        "inventories": {**inv(parent, {"DISK_GB": {"total": 100}, "VCPU": {"total": 8}},
                              gen=8),
                        **inv(child, {}, gen=3)},
        "allocations": {a.uuid: consumer_body({}, 2)},
    })
    assert resp.status_code == 204, resp.content
    assert (generation(parent), generation(child)) == (11, 5)
    assert inventory_of(child) == {}
    assert not Consumer.objects.filter(uuid=a.uuid).exists()
    assert allocations_of(b.uuid) == {(parent.uuid, "DISK_GB"): 20}


def test_inventory_only_and_reserved_above_total_is_accepted(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    other = make_provider("other")
    resp = api.post("/reshaper", {
        "inventories": {**inv(cn, {"VCPU": {"total": 4, "reserved": 10}}),
                        **inv(other, {})},
        "allocations": {},
    })
    assert resp.status_code == 204, resp.content
    assert Inventory.objects.get(provider=cn).reserved == 10
    assert generation(cn) == 3  # its inventory write + interim + final
    assert generation(other) == 1  # final only


def test_new_consumer_and_mappings_at_1_34(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    consumer = new_uuid()
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"VCPU": {"total": 8}}),
        "allocations": {consumer: consumer_body(
            {cn: {"VCPU": 3}}, None, consumer_type=None, mappings={"": [cn.uuid]})},
    }, version="1.34")
    assert resp.status_code == 204, resp.content
    assert allocations_of(consumer) == {(cn.uuid, "VCPU"): 3}
    assert Consumer.objects.get(uuid=consumer).consumer_type is None


# --- all or nothing -------------------------------------------------------------------

def test_failure_on_the_last_item_leaves_the_database_as_it_was(api, compute_with_vgpus):
    cn, first, second = compute_with_vgpus
    gpu0 = make_provider("cn1_pgpu0", parent=cn)
    gpu1 = make_provider("cn1_pgpu1", parent=cn)
    newcomer = new_uuid()
    before = snapshot()
    body = {
        "inventories": {
            **inv(cn, {"VCPU": {"total": 16}}),
            **inv(gpu0, {"VGPU": {"total": 2}}),
            **inv(gpu1, {"VGPU": {"total": 2}}),
        },
        "allocations": {
            newcomer: consumer_body({cn: {"VCPU": 1}}, None, consumer_type="NEW_TYPE"),
            first.uuid: consumer_body({cn: {"VCPU": 2}, gpu0: {"VGPU": 1}}, 1),
            # the last item does not fit: gpu1 has 2 VGPU
            second.uuid: consumer_body({cn: {"VCPU": 4}, gpu1: {"VGPU": 3}}, 1),
        },
    }
    resp = api.post("/reshaper", body)
    assert resp.status_code == 409, resp.content
    assert "Unable to allocate inventory" in error_detail(resp)
    assert snapshot() == before

    # the same request, fixed, succeeds
    body["allocations"][second.uuid]["allocations"][gpu1.uuid]["resources"]["VGPU"] = 2
    resp = api.post("/reshaper", body)
    assert resp.status_code == 204, resp.content
    assert snapshot() != before


def test_final_inventory_removing_used_class_fails_whole_request(api, compute_with_vgpus):
    cn, first, _ = compute_with_vgpus
    gpu0 = make_provider("cn1_pgpu0", parent=cn)
    before = snapshot()
    # VGPU leaves cn, but only the first consumer's VGPU allocation moves.
    resp = api.post("/reshaper", {
        "inventories": {**inv(cn, {"VCPU": {"total": 16}}),
                        **inv(gpu0, {"VGPU": {"total": 4}})},
        "allocations": {first.uuid: consumer_body({cn: {"VCPU": 2}, gpu0: {"VGPU": 1}}, 1)},
    })
    assert resp.status_code == 409
    assert error_code(resp) == "placement.inventory.inuse"
    assert "update conflict: Inventory for 'VGPU' on resource provider" in error_detail(resp)
    assert "in use" in error_detail(resp)
    assert snapshot() == before


# --- errors -----------------------------------------------------------------------------

def test_route_version_method_and_media_type(api):
    cn = make_provider("cn1")
    body = {"inventories": inv(cn, {}), "allocations": {}}
    assert api.post("/reshaper", body, version="1.29").status_code == 404
    resp = api.get("/reshaper", version="1.0")
    assert resp.status_code == 405 and resp["Allow"] == "POST"
    resp = api.post("/reshaper", raw="{}", content_type="text/plain")
    assert resp.status_code == 415
    assert generation(cn) == 0


def test_policy(api, make_api, settings):
    cn = make_provider("cn1")
    body = {"inventories": inv(cn, {}), "allocations": {}}
    assert make_api(token="user").post("/reshaper", body).status_code == 403
    settings.PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS = True
    assert api.post("/reshaper", body).status_code == 403  # admin alone is not enough
    resp = api.post("/reshaper", body, headers={"X-Roles": "service"})
    assert resp.status_code == 204
    assert generation(cn) == 1


@pytest.mark.parametrize("version, mutate, fragment", [
    ("1.30", lambda b, c: b["allocations"][c].update(consumer_type="INSTANCE"),
     "Additional properties are not allowed"),
    ("1.38", lambda b, c: b["allocations"][c].pop("consumer_type"),
     "'consumer_type' is a required property"),
    ("1.33", lambda b, c: b["allocations"][c].update(mappings={"": [c]}),
     "Additional properties are not allowed"),
    ("1.38", lambda b, c: b["inventories"][next(iter(b["inventories"]))].update(
        resource_provider_generation=None), "None is not of type 'integer'"),
    ("1.38", lambda b, c: b.pop("allocations"), "'allocations' is a required property"),
    ("1.38", lambda b, c: b.update(inventories={}), "should be non-empty"),
    ("1.38", lambda b, c: b.update(extra=1), "Additional properties are not allowed"),
    ("1.38", lambda b, c: b["allocations"][c]["allocations"].update(
        {"not-a-uuid": {"resources": {"VCPU": 1}}}), "does not validate"),
    ("1.38", lambda b, c: b["inventories"][next(iter(b["inventories"]))]["inventories"]
     .update(DISK_GB={"total": 0}), "is less than the minimum of 1"),
])
def test_schema_errors(api, version, mutate, fragment):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    consumer = new_uuid()
    body = {"inventories": inv(cn, {"VCPU": {"total": 8}}),
            "allocations": {consumer: consumer_body(
                {cn: {"VCPU": 1}}, None,
                consumer_type="INSTANCE" if version >= "1.38" else None)}}
    mutate(body, consumer)
    resp = api.post("/reshaper", body, version=version)
    assert resp.status_code == 400, resp.content
    assert "JSON does not validate" in error_detail(resp)
    assert fragment in error_detail(resp)
    assert generation(cn) == 1  # as its inventory write left it


def test_inventory_provider_not_found(api):
    cn = make_provider("cn1")
    missing = new_uuid()
    resp = api.post("/reshaper", {"inventories": {**inv(cn, {}), **inv(
        type("P", (), {"uuid": missing})(), {}, gen=0)}, "allocations": {}})
    assert resp.status_code == 400
    assert error_code(resp) == "placement.resource_provider.not_found"
    assert f"Resource provider {missing} in inventories not found" in error_detail(resp)
    assert generation(cn) == 0


def test_provider_generation_conflict_names_actual_and_given(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    resp = api.post("/reshaper", {"inventories": inv(cn, {}, gen=7), "allocations": {}})
    assert resp.status_code == 409
    assert error_code(resp) == "placement.concurrent_update"
    assert (f"resource provider generation conflict for provider {cn.uuid}: "
            "actual: 1, given: 7") in error_detail(resp)
    assert inventory_of(cn) == {"VCPU": 8}


def test_consumer_generation_conflict(api, compute_with_vgpus):
    cn, first, _ = compute_with_vgpus
    before = snapshot()
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"VCPU": {"total": 16}, "VGPU": {"total": 4}}),
        "allocations": {first.uuid: consumer_body({cn: {"VCPU": 1}}, None)},
    })
    assert resp.status_code == 409
    assert error_code(resp) == "placement.concurrent_update"
    assert "consumer generation conflict - expected 1 but got None" in error_detail(resp)
    assert snapshot() == before


def test_allocation_provider_missing(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    missing = new_uuid()
    before = snapshot()
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"VCPU": {"total": 8}}),
        "allocations": {new_uuid(): {
            "allocations": {missing: {"resources": {"VCPU": 1}}},
            "project_id": PROJECT, "user_id": USER, "consumer_generation": None,
            "consumer_type": "INSTANCE"}},
    })
    assert resp.status_code == 400
    assert f"Allocation for resource provider '{missing}' that does not exist." in \
        error_detail(resp)
    assert snapshot() == before


def test_unknown_resource_class_in_inventory_and_in_allocations(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    before = snapshot()
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"CUSTOM_NOPE": {"total": 8}}), "allocations": {}})
    assert resp.status_code == 400
    assert "malformed reshaper data: No such resource class CUSTOM_NOPE." in error_detail(resp)
    assert snapshot() == before

    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"VCPU": {"total": 8}}),
        "allocations": {new_uuid(): consumer_body({cn: {"CUSTOM_ALSO_NOPE": 1}}, None)}})
    assert resp.status_code == 400
    assert "malformed reshaper data: No such resource class CUSTOM_ALSO_NOPE." in \
        error_detail(resp)
    assert snapshot() == before

    # with both, the inventory's class is reported (it is resolved first)
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"CUSTOM_NOPE": {"total": 8}}),
        "allocations": {new_uuid(): consumer_body({cn: {"CUSTOM_ALSO_NOPE": 1}}, None)}})
    assert "No such resource class CUSTOM_NOPE." in error_detail(resp)


def test_allocation_against_removed_or_constrained_inventory(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    before = snapshot()
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"VCPU": {"total": 8, "step_size": 2}}),
        "allocations": {new_uuid(): consumer_body({cn: {"VCPU": 3}}, None)}})
    assert resp.status_code == 409
    assert "violate inventory constraints" in error_detail(resp)
    assert error_code(resp) == "placement.undefined_code"
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"VCPU": {"total": 8}}),
        "allocations": {new_uuid(): consumer_body({cn: {"MEMORY_MB": 3}}, None)}})
    assert resp.status_code == 409
    assert "Unable to allocate inventory: Inventory for 'MEMORY_MB'" in error_detail(resp)
    assert snapshot() == before


def test_allocations_may_use_the_interim_inventory_only(api):
    """A class removed in the final step can't keep allocations made in step 5."""
    cn = make_provider("cn1", inventory={"VCPU": 8, "DISK_GB": 10})
    before = snapshot()
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"VCPU": {"total": 8}}),
        "allocations": {new_uuid(): consumer_body({cn: {"DISK_GB": 3}}, None)}})
    assert resp.status_code == 409
    assert error_code(resp) == "placement.inventory.inuse"
    assert snapshot() == before


# --- order of the checks ------------------------------------------------------------------

def test_inventory_providers_are_checked_in_body_order(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    missing = type("P", (), {"uuid": new_uuid()})()
    stale_first = {**inv(cn, {}, gen=3), **inv(missing, {}, gen=0)}
    resp = api.post("/reshaper", {"inventories": stale_first, "allocations": {}})
    assert resp.status_code == 409
    assert "resource provider generation conflict" in error_detail(resp)
    missing_first = {**inv(missing, {}, gen=0), **inv(cn, {}, gen=3)}
    resp = api.post("/reshaper", {"inventories": missing_first, "allocations": {}})
    assert resp.status_code == 400
    assert error_code(resp) == "placement.resource_provider.not_found"


def test_provider_generation_before_consumer_generation_before_allocation_providers(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    missing = new_uuid()
    stale_consumer = consumer_body({cn: {"VCPU": 1}}, 4)
    stale_consumer["allocations"][missing] = {"resources": {"VCPU": 1}}
    before = snapshot()
    resp = api.post("/reshaper", {"inventories": inv(cn, {}, gen=9),
                                  "allocations": {new_uuid(): stale_consumer}})
    assert resp.status_code == 409
    assert "resource provider generation conflict" in error_detail(resp)
    resp = api.post("/reshaper", {"inventories": inv(cn, {"VCPU": {"total": 8}}),
                                  "allocations": {new_uuid(): stale_consumer}})
    assert resp.status_code == 409
    assert "consumer generation conflict - expected null but got 4" in error_detail(resp)
    stale_consumer["consumer_generation"] = None
    resp = api.post("/reshaper", {"inventories": inv(cn, {"VCPU": {"total": 8}}),
                                  "allocations": {new_uuid(): stale_consumer}})
    assert resp.status_code == 400
    assert f"Allocation for resource provider '{missing}' that does not exist." in \
        error_detail(resp)
    assert snapshot() == before


def test_success_at_1_30_has_no_body_and_no_cache_headers(api):
    cn = make_provider("cn1", inventory={"VCPU": 8})
    consumer = new_uuid()
    resp = api.post("/reshaper", {
        "inventories": inv(cn, {"VCPU": {"total": 8}}),
        "allocations": {consumer: consumer_body({cn: {"VCPU": 2}}, None, consumer_type=None)},
    }, version="1.30")
    assert resp.status_code == 204, resp.content
    assert resp.content == b""
    assert "Last-Modified" not in resp and "Cache-Control" not in resp
    assert allocations_of(consumer) == {(cn.uuid, "VCPU"): 2}
    assert Consumer.objects.get(uuid=consumer).generation == 1


@pytest.mark.parametrize("records", [
    {"vcpu": "not-an-object"}, {"vcpu": None}, {"vcpu": {"total": "x"}},
])
def test_inventory_keys_outside_the_pattern_are_unknown_classes(api, records):
    # Such keys escape the schema (patternProperties); they fail as unknown classes.
    cn = make_provider("cn1", inventory={"VCPU": 8})
    before = snapshot()
    resp = api.post("/reshaper", {"inventories": inv(cn, records), "allocations": {}})
    assert resp.status_code == 400
    assert "malformed reshaper data: No such resource class vcpu." in error_detail(resp)
    assert snapshot() == before
