"""export_tree, import_tree and load_sample against a real database."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from allocations.models import Allocation, Consumer
from providers.models import Inventory, ProviderAggregate, ResourceProvider
from providers.samples import SAMPLES, sample_uuid
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db


def run(name, *args):
    out, err = StringIO(), StringIO()
    call_command(name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def state():
    """Providers, inventories, traits, aggregates and allocations as plain data."""
    return {
        "providers": sorted(ResourceProvider.objects.values_list(
            "uuid", "name", "parent__uuid", "root__uuid", "generation")),
        "inventories": sorted(Inventory.objects.values_list(
            "provider__uuid", "resource_class__name", "total", "reserved", "min_unit",
            "max_unit", "step_size", "allocation_ratio")),
        "traits": sorted(ResourceProvider.objects.filter(traits__isnull=False)
                         .values_list("uuid", "traits__name")),
        "aggregates": sorted(ProviderAggregate.objects.values_list(
            "provider__uuid", "aggregate__uuid")),
        "allocations": sorted(Allocation.objects.values_list(
            "consumer__uuid", "provider__uuid", "resource_class__name", "used",
            "consumer__project__external_id", "consumer__user__external_id",
            "consumer__consumer_type__name")),
    }


def delete_everything():
    Allocation.objects.all().delete()
    Consumer.objects.all().delete()
    for level in sorted(set(ResourceProvider.objects.values_list("level", flat=True)),
                        reverse=True):
        for provider in ResourceProvider.objects.filter(level=level):
            provider.delete()


def write(tmp_path, document, name="doc.json"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


# --- load_sample -------------------------------------------------------------------------

def test_load_sample_list():
    out, _ = run("load_sample", "--list")
    for name in SAMPLES:
        assert name in out


def test_load_all_samples_then_again_is_idempotent():
    out, err = run("load_sample", "all")
    for name in SAMPLES:
        assert f"Sample {name}:" in out
    assert "Loading numa_fpga: 7/7 done" in err
    loaded = state()
    assert len(loaded["providers"]) == 15
    assert Consumer.objects.count() == 6

    out, _ = run("load_sample", "all")
    assert "0 provider(s) created, 0 updated, 3 unchanged" in out
    assert state() == loaded  # generations included: nothing was rewritten


def test_load_sample_if_empty():
    make_provider("existing")
    out, _ = run("load_sample", "--if-empty", "all")
    assert "no sample loaded" in out
    assert ResourceProvider.objects.count() == 1


def test_load_sample_errors():
    with pytest.raises(CommandError, match="Unknown sample"):
        run("load_sample", "nope")
    with pytest.raises(CommandError, match="Name a sample"):
        run("load_sample")
    assert ResourceProvider.objects.count() == 0


def test_shared_storage_sample_shape(api):
    run("load_sample", "shared_storage")
    storage = sample_uuid("shared-storage", "storage")
    cn1 = sample_uuid("shared-storage", "cn1")
    traits = api.get(f"/resource_providers/{storage}/traits").json()["traits"]
    assert "MISC_SHARES_VIA_AGGREGATE" in traits
    aggs = api.get(f"/resource_providers/{storage}/aggregates").json()["aggregates"]
    assert aggs == api.get(f"/resource_providers/{cn1}/aggregates").json()["aggregates"]
    usages = api.get(f"/resource_providers/{storage}/usages").json()["usages"]
    assert usages == {"DISK_GB": 140}


def test_numa_and_sriov_sample_shapes(api):
    run("load_sample", "numa_fpga", "sriov_physnets")
    fpga = api.get(f"/resource_providers/{sample_uuid('numa-fpga', 'numa1-fpga0')}").json()
    assert fpga["parent_provider_uuid"] == sample_uuid("numa-fpga", "numa1")
    assert fpga["root_provider_uuid"] == sample_uuid("numa-fpga", "cn1")
    pf = sample_uuid("sriov", "nic2-pf1")
    assert "CUSTOM_PHYSNET_PRIVATE" in api.get(
        f"/resource_providers/{pf}/traits").json()["traits"]
    inventories = api.get(f"/resource_providers/{pf}/inventories").json()["inventories"]
    assert inventories["SRIOV_NET_VF"]["total"] == 8
    tree = api.get(f"/resource_providers?in_tree={sample_uuid('sriov', 'cn1')}").json()
    assert len(tree["resource_providers"]) == 7


# --- export_tree / import_tree ------------------------------------------------------------

def test_export_import_round_trip(tmp_path):
    run("load_sample", "all")
    before = state()
    path = str(tmp_path / "all.json")
    _, err = run("export_tree", "--all", "--allocations", "-o", path)
    assert "Exported 15 provider(s) and 6 consumer(s)" in err
    document = json.loads(open(path).read())
    assert document["format"] == "placement-tree/1"
    assert "CUSTOM_PHYSNET_PUBLIC" in document["traits"]

    # importing onto itself is a no-op
    out, _ = run("import_tree", path)
    assert "0 provider(s) created, 0 updated, 15 unchanged" in out
    assert state() == before

    delete_everything()
    out, err = run("import_tree", path)
    assert "15 provider(s) created" in out
    assert "Importing: 21/21 done" in err
    after = state()
    # same data; generations differ because the import wrote through the API
    strip = lambda s: {**s, "providers": [p[:4] for p in s["providers"]]}  # noqa: E731
    assert strip(after) == strip(before)


def test_export_one_tree_to_stdout_warns_about_outside_allocations():
    cn = make_provider("cn", inventory={"VCPU": 8}, traits=["HW_CPU_X86_AVX2"])
    child = make_provider("child", parent=cn, inventory={"CUSTOM_MAGIC": 2})
    shared = make_provider("shared", inventory={"DISK_GB": 100})
    other = make_provider("other-tree", inventory={"VCPU": 8})
    consumer = make_consumer(consumer_type="INSTANCE")
    allocate(consumer, child, CUSTOM_MAGIC=1)
    allocate(consumer, shared, DISK_GB=10)
    out, err = run("export_tree", child.uuid, "--allocations")
    document = json.loads(out)
    assert [p["name"] for p in document["providers"]] == ["cn", "child"]
    assert document["providers"][1]["parent_provider_uuid"] == cn.uuid
    assert document["resource_classes"] == ["CUSTOM_MAGIC"]
    assert document["allocations"][consumer.uuid]["allocations"] == {
        child.uuid: {"resources": {"CUSTOM_MAGIC": 1}},
        shared.uuid: {"resources": {"DISK_GB": 10}}}
    assert document["allocations"][consumer.uuid]["consumer_type"] == "INSTANCE"
    assert f"provider {shared.uuid}, which is not exported" in err
    assert other.uuid not in out


def test_export_errors():
    with pytest.raises(CommandError, match="UUIDs, or --all"):
        run("export_tree")
    with pytest.raises(CommandError, match="No resource provider with uuid"):
        run("export_tree", "5a3e7a36-6c43-4f5c-9a54-0d1fa8e0c0de")


def _doc(*providers, allocations=None):
    document = {"format": "placement-tree/1", "providers": list(providers)}
    if allocations is not None:
        document["allocations"] = allocations
    return document


U1 = "11111111-1111-4111-8111-111111111111"
U2 = "22222222-2222-4222-8222-222222222222"
U3 = "33333333-3333-4333-8333-333333333333"
C1 = "44444444-4444-4444-8444-444444444444"


def test_import_updates_what_differs(tmp_path):
    make_provider("root", uuid=U1, inventory={"VCPU": 8}, traits=["HW_CPU_X86_AVX2"])
    document = _doc({"uuid": U1, "name": "root", "inventories": {"VCPU": {"total": 16}},
                     "traits": ["HW_CPU_X86_AVX2", "CUSTOM_NEW"],
                     "aggregates": [U3]})
    out, _ = run("import_tree", write(tmp_path, document))
    assert "Updated provider root" in out and "inventories, traits, aggregates" in out
    assert Inventory.objects.get(provider__uuid=U1).total == 16
    # 2 from the set-up (inventory, traits), then one write each for the three sets
    assert ResourceProvider.objects.get(uuid=U1).generation == 5


@pytest.mark.parametrize("document, message", [
    (_doc({"uuid": U1, "name": "renamed"}), "exists with name 'root'"),
    (_doc({"uuid": U2, "name": "root"}), "name 'root' is taken by provider " + U1),
    (_doc({"uuid": U2, "name": "kid", "parent_provider_uuid": U3}),
     "parent " + U3 + " is neither in the document nor in the database"),
    (_doc({"uuid": U1, "name": "root", "parent_provider_uuid": U2},
          {"uuid": U2, "name": "new-parent"}), "exists with parent None"),
    (_doc({"uuid": U2, "name": "a"}, {"uuid": U2, "name": "b"}), "appears twice"),
    (_doc({"uuid": U1, "name": "root"},
          allocations={C1: {"allocations": {U1: {"resources": {"VCPU": 1}}},
                            "project_id": "p", "user_id": "u"}}),
     f"consumer {C1} already holds other allocations"),
    (_doc({"uuid": U2, "name": "x"},
          allocations={C1: {"allocations": {U3: {"resources": {"VCPU": 1}}},
                            "project_id": "p", "user_id": "u"}}),
     f"Allocations name provider {U3}"),
])
def test_import_refuses_conflicts_and_writes_nothing(tmp_path, document, message):
    root = make_provider("root", uuid=U1, inventory={"VCPU": 8})
    allocate(make_consumer(uuid=C1), root, VCPU=2)
    before = state()
    with pytest.raises(CommandError) as exc:
        run("import_tree", write(tmp_path, document))
    assert message in str(exc.value)
    assert state() == before


def test_import_is_all_or_nothing_when_the_api_refuses(tmp_path):
    document = _doc(
        {"uuid": U1, "name": "cn", "inventories": {"VCPU": {"total": 4}}},
        {"uuid": U2, "name": "child", "parent_provider_uuid": U1,
         "inventories": {"CUSTOM_NEW_THING": {"total": 1}}},
        allocations={C1: {"allocations": {U1: {"resources": {"VCPU": 5}}},
                          "project_id": "p", "user_id": "u", "consumer_type": "INSTANCE"}})
    with pytest.raises(CommandError) as exc:
        run("import_tree", write(tmp_path, document))
    assert "Nothing was imported: Allocations refused:" in str(exc.value)
    assert "exceed the capacity" in str(exc.value)
    assert ResourceProvider.objects.count() == 0
    assert not Inventory.objects.exists()
    # and the fixed document imports
    document["allocations"][C1]["allocations"][U1]["resources"]["VCPU"] = 4
    run("import_tree", write(tmp_path, document))
    assert Allocation.objects.get().used == 4
    assert ResourceProvider.objects.get(uuid=U2).parent.uuid == U1


@pytest.mark.parametrize("content, message", [
    ("{", "is not valid JSON"),
    ("[]", "Invalid tree document at (document)"),
    (json.dumps({"providers": [{"uuid": U1}]}), "'name' is a required property"),
    (json.dumps({"providers": [{"uuid": "nope", "name": "x"}]}),
     "Invalid tree document at providers/0/uuid"),
    (json.dumps({"format": "other", "providers": []}), "Invalid tree document at format"),
])
def test_import_bad_files(tmp_path, content, message):
    with pytest.raises(CommandError, match="") as exc:
        run("import_tree", write(tmp_path, content))
    assert message in str(exc.value)


def test_import_missing_file(tmp_path):
    with pytest.raises(CommandError, match="File not found"):
        run("import_tree", str(tmp_path / "absent.json"))
    with pytest.raises(CommandError, match="Not a file"):
        run("import_tree", str(tmp_path))
