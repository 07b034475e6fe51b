"""manage.py reshape FILE [--dry-run] against a real database."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.factories import allocate, make_consumer, make_provider
from tests.reshaper.test_api_reshaper import PROJECT, USER, snapshot

pytestmark = pytest.mark.django_db


def run(*args):
    out, err = StringIO(), StringIO()
    call_command("reshape", *args, stdout=out, stderr=err)
    return out.getvalue()


@pytest.fixture
def vgpu_move(tmp_path):
    """A compute node with VGPU used by one instance, and a payload moving it to a child."""
    cn = make_provider("cn1", inventory={"VCPU": 16, "VGPU": 4})
    gpu = make_provider("cn1_pgpu0", parent=cn)
    consumer = make_consumer(project=PROJECT, user=USER, consumer_type="INSTANCE")
    allocate(consumer, cn, VCPU=2, VGPU=1)
    payload = {
        "inventories": {
            # 2: its inventory write and the allocation
            cn.uuid: {"resource_provider_generation": cn.generation,
                      "inventories": {"VCPU": {"total": 16}}},
            gpu.uuid: {"resource_provider_generation": 0,
                       "inventories": {"VGPU": {"total": 4, "max_unit": 2}}},
        },
        "allocations": {consumer.uuid: {
            "allocations": {cn.uuid: {"resources": {"VCPU": 2}},
                            gpu.uuid: {"resources": {"VGPU": 1}}},
            "project_id": PROJECT, "user_id": USER, "consumer_generation": 1,
            "consumer_type": "INSTANCE"}},
    }
    path = tmp_path / "reshape.json"
    path.write_text(json.dumps(payload))
    return cn, gpu, consumer, payload, path


def test_dry_run_shows_before_and_after_and_changes_nothing(vgpu_move):
    cn, gpu, consumer, _, path = vgpu_move
    before = snapshot()
    out = run(str(path), "--dry-run")
    assert snapshot() == before
    assert f"Provider cn1 ({cn.uuid}): generation 2 -> 5" in out
    assert "  inventory VGPU: total=4 -> (none)" in out
    assert f"Provider cn1_pgpu0 ({gpu.uuid}): generation 0 -> 3" in out
    assert "  inventory VGPU: (none) -> total=4 max_unit=2" in out
    assert f"Consumer {consumer.uuid}: generation 1 -> 2" in out
    assert f"  VGPU on cn1 ({cn.uuid}): 1 -> (none)" in out
    assert f"  VGPU on cn1_pgpu0 ({gpu.uuid}): (none) -> 1" in out
    assert "VCPU on cn1" not in out  # unchanged allocations are not listed
    assert "Dry run: nothing was changed." in out


def test_apply_changes_the_database(vgpu_move):
    cn, gpu, consumer, _, path = vgpu_move
    out = run(str(path))
    assert "Reshape applied." in out
    assert gpu.inventories.get().resource_class.name == "VGPU"
    assert sorted(cn.inventories.values_list("resource_class__name", flat=True)) == ["VCPU"]
    assert consumer.allocations.get(provider=gpu).used == 1
    # the same file again is refused: generations moved on
    with pytest.raises(CommandError, match="resource provider generation conflict"):
        run(str(path))


def test_api_validation_errors_are_reported_and_nothing_changes(vgpu_move):
    _, gpu, consumer, payload, path = vgpu_move
    payload["allocations"][consumer.uuid]["allocations"][gpu.uuid]["resources"]["VGPU"] = 3
    path.write_text(json.dumps(payload))
    before = snapshot()
    with pytest.raises(CommandError) as exc:
        run(str(path), "--dry-run")
    assert "Reshape refused (409" in str(exc.value)
    assert "violate inventory constraints" in str(exc.value)
    assert snapshot() == before


def test_microversion_option_selects_the_schema(vgpu_move):
    _, _, consumer, payload, path = vgpu_move
    with pytest.raises(CommandError, match="Reshape refused \\(404"):
        run(str(path), "--microversion", "1.29")
    with pytest.raises(CommandError, match="Additional properties are not allowed"):
        run(str(path), "--microversion", "1.37")
    del payload["allocations"][consumer.uuid]["consumer_type"]
    path.write_text(json.dumps(payload))
    assert "Reshape applied." in run(str(path), "--microversion", "1.37")


@pytest.mark.parametrize("content, message", [
    ("{", "is not valid JSON"),
    ("[1, 2]", "must hold a JSON object"),
    ("{}", "'inventories' is a required property"),
    (b"\xff\xfe", "is not UTF-8 text"),
])
def test_bad_files(tmp_path, content, message):
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(CommandError) as exc:
        run(str(path))
    assert message in str(exc.value)


def test_missing_file(tmp_path):
    with pytest.raises(CommandError, match="File not found"):
        run(str(tmp_path / "absent.json"))
