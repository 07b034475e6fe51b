"""The change log of allocation writes and reshapes: one INSERT per write, nothing read
for it, the consumer's and each provider's before -> after."""
import io
import json
import uuid as uuidlib

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from allocations import edits, exceptions, services
from allocations.models import Allocation
from providers.models import ChangeRecord, ResourceProvider
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

PROJECT, USER = "proj-a", "alice"

# Statements of PUT /allocations/{c} through the whole stack (SQLite, measured before the
# change log existed): a new consumer 16, an existing one 15, and since issue 51 (the
# look-ups of a write in one statement, no savepoint around a new consumer) 8 and
# 9; DELETE /allocations/{c} 8. The change log adds exactly one INSERT to each.
# PostgreSQL locks the providers and bumps their generation in one statement: a PUT
# is one fewer there.
PUT_NEW_STATEMENTS = 8
PUT_EXISTING_STATEMENTS = 9
DELETE_STATEMENTS = 8


def new_uuid():
    return str(uuidlib.uuid4())


def body(allocations, generation, consumer_type="INSTANCE"):
    return {"allocations": {rp.uuid: {"resources": res} for rp, res in allocations.items()},
            "project_id": PROJECT, "user_id": USER, "consumer_generation": generation,
            "consumer_type": consumer_type}


def entries(entity, kind):
    return list(ChangeRecord.objects.filter(kind=kind, entity=entity).order_by("id"))


def change_log_statements(captured):
    return [q["sql"] for q in captured.captured_queries if "change_records" in q["sql"]]


@pytest.fixture
def hosts(db):
    """Two providers at generation 1 (their inventory write); the log starts after them."""
    made = (make_provider("cn1", inventory={"VCPU": 8, "MEMORY_MB": 4096}),
            make_provider("cn2", inventory={"VCPU": 8, "MEMORY_MB": 4096}))
    ChangeRecord.objects.all().delete()
    return made


def test_put_allocations_adds_one_insert_and_no_read(api, hosts):
    cn1, cn2 = hosts
    api.put(f"/allocations/{new_uuid()}", body({cn1: {"VCPU": 1}}, None))  # warm caches
    consumer = new_uuid()

    with CaptureQueriesContext(connection) as new:
        response = api.put(f"/allocations/{consumer}", body({cn1: {"VCPU": 2}}, None))
    assert response.status_code == 204
    with CaptureQueriesContext(connection) as existing:
        response = api.put(f"/allocations/{consumer}",
                           body({cn1: {"VCPU": 1}, cn2: {"MEMORY_MB": 512}}, 1))
    assert response.status_code == 204
    with CaptureQueriesContext(connection) as deleted:
        assert api.delete(f"/allocations/{consumer}").status_code == 204

    put_saves = 1 if connection.vendor == "postgresql" else 0
    for captured, baseline in ((new, PUT_NEW_STATEMENTS - put_saves),
                               (existing, PUT_EXISTING_STATEMENTS - put_saves),
                               (deleted, DELETE_STATEMENTS)):
        logged = change_log_statements(captured)
        assert len(logged) == 1 and logged[0].startswith(
            f"INSERT INTO {connection.ops.quote_name('change_records')}"), logged
        assert len(captured) == baseline + 1, [q["sql"][:90] for q in captured.captured_queries]


def test_put_records_consumer_and_provider_transitions(api, hosts):
    cn1, cn2 = hosts
    consumer = new_uuid()
    first = api.put(f"/allocations/{consumer}", body({cn1: {"VCPU": 2, "MEMORY_MB": 512}}, None))
    second = api.put(f"/allocations/{consumer}", body({cn2: {"VCPU": 2}}, 1))

    created, moved = entries(consumer, "consumer")
    assert (created.action, created.actor, created.project_id, created.request_id) == (
        "allocations", "admin", "admin", first["x-openstack-request-id"])
    assert created.before is None
    assert created.after == {"generation": 1, "project": PROJECT, "user": USER,
                             "consumer_type": "INSTANCE",
                             "allocations": {cn1.uuid: {"VCPU": 2, "MEMORY_MB": 512}}}
    assert moved.request_id == second["x-openstack-request-id"]
    # the replaced allocations came back from the DELETE itself
    assert moved.before == {"generation": 1,
                            "allocations": {cn1.uuid: {"VCPU": 2, "MEMORY_MB": 512}}}
    assert moved.after["generation"] == 2
    assert moved.after["allocations"] == {cn2.uuid: {"VCPU": 2}}

    cn1_first, cn1_second = entries(cn1.uuid, "provider")
    assert (cn1_first.before, cn1_first.after) == (
        {"generation": 1, "consumers": {}},
        {"generation": 2, "consumers": {consumer: {"VCPU": 2, "MEMORY_MB": 512}}})
    # cn1 lost the consumer without a generation bump (Placement's rule): no generation here
    assert (cn1_second.before, cn1_second.after) == (
        {"consumers": {consumer: {"VCPU": 2, "MEMORY_MB": 512}}}, {"consumers": {consumer: {}}})
    (cn2_entry,) = entries(cn2.uuid, "provider")
    assert (cn2_entry.before, cn2_entry.after) == (
        {"generation": 1, "consumers": {}}, {"generation": 2, "consumers": {consumer: {"VCPU": 2}}})


def test_post_allocations_records_every_consumer_in_one_insert(api, hosts):
    cn1, cn2 = hosts
    a, b = new_uuid(), new_uuid()
    payload = {a: body({cn1: {"VCPU": 1}}, None), b: body({cn1: {"VCPU": 1}, cn2: {"VCPU": 1}}, None)}
    with CaptureQueriesContext(connection) as captured:
        assert api.post("/allocations", payload).status_code == 204
    assert len(change_log_statements(captured)) == 1
    assert len(entries(a, "consumer")) == len(entries(b, "consumer")) == 1
    (cn1_entry,) = entries(cn1.uuid, "provider")
    assert cn1_entry.after == {"generation": 2, "consumers": {a: {"VCPU": 1}, b: {"VCPU": 1}}}
    # emptying a consumer by POST deletes it: after is None
    assert api.post("/allocations", {a: {**body({}, 1), "allocations": {}}}).status_code == 204
    emptied = entries(a, "consumer")[-1]
    assert (emptied.before, emptied.after) == (
        {"generation": 1, "allocations": {cn1.uuid: {"VCPU": 1}}}, None)


def test_delete_allocations_records_what_was_held(api, hosts):
    cn1, cn2 = hosts
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body({cn1: {"VCPU": 2}, cn2: {"MEMORY_MB": 64}}, None))
    rid = api.delete(f"/allocations/{consumer}")["x-openstack-request-id"]
    deleted = entries(consumer, "consumer")[-1]
    assert (deleted.action, deleted.request_id, deleted.after) == ("delete", rid, None)
    assert deleted.before == {"generation": 1, "allocations": {cn1.uuid: {"VCPU": 2},
                                                               cn2.uuid: {"MEMORY_MB": 64}}}
    assert entries(cn2.uuid, "provider")[-1].before == {"consumers": {consumer: {"MEMORY_MB": 64}}}
    assert entries(cn2.uuid, "provider")[-1].after == {"consumers": {consumer: {}}}


def test_refused_and_conflicting_writes_record_nothing(api, hosts):
    cn1, _ = hosts
    consumer = new_uuid()
    before = ChangeRecord.objects.count()
    assert api.put(f"/allocations/{consumer}",
                   body({cn1: {"VCPU": 100}}, None)).status_code == 409  # capacity
    assert api.put(f"/allocations/{consumer}",
                   body({cn1: {"VCPU": 1}}, 3)).status_code == 409  # generation
    assert ChangeRecord.objects.count() == before


def test_move_service_is_one_generation_checked_replace(hosts):
    cn1, cn2 = hosts
    consumer = new_uuid()
    services.allocations_replace(consumers=[services.ConsumerAllocations(
        consumer, PROJECT, USER, {cn1.uuid: {"VCPU": 2, "MEMORY_MB": 256}},
        consumer_type="INSTANCE", generation=None)])
    with pytest.raises(exceptions.ProviderGenerationMismatch):
        edits.allocation_move(consumer_uuid=consumer, resource_class="VCPU",
                                 source_uuid=cn1.uuid, target_uuid=cn2.uuid,
                                 consumer_generation=1, source_generation=2,
                                 target_generation=5)
    with pytest.raises(exceptions.ConsumerGenerationConflict):
        edits.allocation_move(consumer_uuid=consumer, resource_class="VCPU",
                                 source_uuid=cn1.uuid, target_uuid=cn2.uuid,
                                 consumer_generation=0, source_generation=2,
                                 target_generation=1)
    assert edits.allocation_move(
        consumer_uuid=consumer, resource_class="VCPU", source_uuid=cn1.uuid,
        target_uuid=cn2.uuid, consumer_generation=1, source_generation=2,
        target_generation=1) == 2
    assert sorted(Allocation.objects.filter(consumer__uuid=consumer).values_list(
        "provider__name", "resource_class__name", "used")) == [
        ("cn1", "MEMORY_MB", 256), ("cn2", "VCPU", 2)]
    moved = entries(consumer, "consumer")[-1]
    assert moved.before["allocations"] == {cn1.uuid: {"VCPU": 2, "MEMORY_MB": 256}}
    assert moved.after["allocations"] == {cn1.uuid: {"MEMORY_MB": 256}, cn2.uuid: {"VCPU": 2}}
    assert "consumer_type" not in moved.after  # the type was left alone
    # both providers hold part of the new set: both generations moved
    assert ResourceProvider.objects.get(pk=cn1.pk).generation == 3
    assert ResourceProvider.objects.get(pk=cn2.pk).generation == 2


# --------------------------------------------------------------------------
# The reshaper: one entry per provider and consumer
# --------------------------------------------------------------------------

def _vgpu_reshape(cn, gpu, consumer):
    return {
        "inventories": {
            # cn: its inventory write, then the allocation
            cn.uuid: {"resource_provider_generation": 2,
                      "inventories": {"VCPU": {"total": 8}}},
            gpu.uuid: {"resource_provider_generation": 0,
                       "inventories": {"VGPU": {"total": 4}}},
        },
        "allocations": {consumer: {
            "allocations": {cn.uuid: {"resources": {"VCPU": 2}},
                            gpu.uuid: {"resources": {"VGPU": 1}}},
            "project_id": PROJECT, "user_id": USER, "consumer_generation": 1,
            "consumer_type": "INSTANCE"}},
    }


@pytest.fixture
def vgpu(api):
    cn = make_provider("cn1", inventory={"VCPU": 8, "VGPU": 4})
    gpu = make_provider("cn1-gpu0", parent=cn)
    consumer = new_uuid()
    assert api.put(f"/allocations/{consumer}",
                   body({cn: {"VCPU": 2, "VGPU": 1}}, None)).status_code == 204
    return cn, gpu, consumer


def test_reshaper_records_one_entry_per_entity(api, vgpu):
    cn, gpu, consumer = vgpu
    response = api.post("/reshaper", _vgpu_reshape(cn, gpu, consumer))
    assert response.status_code == 204
    rid = response["x-openstack-request-id"]
    reshaped = ChangeRecord.objects.filter(request_id=rid)
    assert sorted(reshaped.values_list("kind", "entity", "action")) == sorted([
        ("provider", cn.uuid, "reshape"), ("provider", gpu.uuid, "reshape"),
        ("consumer", consumer, "reshape")])
    cn_entry = reshaped.get(entity=cn.uuid)
    # first before (the interim write's), last after (the final inventory's), merged
    assert cn_entry.before["generation"] == 2
    assert set(cn_entry.before["inventories"]) == {"VCPU", "VGPU"}
    assert cn_entry.after["generation"] == 5
    assert set(cn_entry.after["inventories"]) == {"VCPU"}
    assert cn_entry.after["consumers"] == {consumer: {"VCPU": 2}}
    consumer_entry = reshaped.get(entity=consumer)
    assert consumer_entry.before == {"generation": 1,
                                     "allocations": {cn.uuid: {"VCPU": 2, "VGPU": 1}}}
    assert consumer_entry.after["allocations"] == {cn.uuid: {"VCPU": 2},
                                                   gpu.uuid: {"VGPU": 1}}


def test_refused_reshape_records_nothing(api, vgpu):
    cn, gpu, consumer = vgpu
    payload = _vgpu_reshape(cn, gpu, consumer)
    payload["inventories"][gpu.uuid]["resource_provider_generation"] = 9
    before = ChangeRecord.objects.count()
    assert api.post("/reshaper", payload).status_code == 409
    assert ChangeRecord.objects.count() == before


def test_reshape_command_records_the_command(vgpu, tmp_path):
    cn, gpu, consumer = vgpu
    path = tmp_path / "reshape.json"
    path.write_text(json.dumps(_vgpu_reshape(cn, gpu, consumer)))
    # a dry run is rolled back with its entries
    call_command("reshape", str(path), "--dry-run", stdout=io.StringIO())
    assert not ChangeRecord.objects.filter(actor="command:reshape").exists()
    call_command("reshape", str(path), stdout=io.StringIO())
    reshaped = ChangeRecord.objects.filter(actor="command:reshape")
    assert sorted(reshaped.values_list("entity", flat=True)) == sorted(
        [cn.uuid, gpu.uuid, consumer])
    assert reshaped.values("request_id").distinct().count() == 1
