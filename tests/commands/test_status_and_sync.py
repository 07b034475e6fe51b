"""manage.py sync_standard and placement_status against a real database."""
from io import StringIO

import pytest
from django.core.management import call_command

from providers.models import ResourceClass, ResourceProvider, Trait
from tests.factories import allocate, make_consumer, make_provider, set_inventory


def run(name, *args):
    out, err = StringIO(), StringIO()
    try:
        call_command(name, *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


# --- sync_standard -------------------------------------------------------------

@pytest.mark.django_db
def test_sync_standard_adds_only_missing_and_keeps_custom():
    Trait.objects.create(name="CUSTOM_KEEP_ME")
    ResourceClass.objects.create(name="CUSTOM_KEEP_ME")
    Trait.objects.filter(name="HW_CPU_X86_AVX").delete()
    ResourceClass.objects.filter(name="PGPU").delete()

    code, out, _ = run("sync_standard")
    assert code == 0
    assert "Added resource class PGPU" in out
    assert "Added trait HW_CPU_X86_AVX" in out
    assert "1 resource class(es) and 1 trait(s) added." in out
    assert Trait.objects.filter(name="HW_CPU_X86_AVX").exists()
    assert ResourceClass.objects.filter(name="PGPU").exists()
    assert Trait.objects.filter(name="CUSTOM_KEEP_ME").exists()
    assert ResourceClass.objects.filter(name="CUSTOM_KEEP_ME").exists()

    code, out, _ = run("sync_standard")
    assert "0 resource class(es) and 0 trait(s) added." in out


# --- placement_status ------------------------------------------------------------

def _result_of(out, title):
    lines = out.splitlines()
    at = lines.index(f"Check: {title}")
    return lines[at + 1].split("Result: ")[1]


@pytest.mark.django_db
def test_status_success_on_healthy_data():
    cn = make_provider("cn1", inventory={"VCPU": 8})
    make_provider("numa0", parent=cn, inventory={"VCPU": 4})
    allocate(make_consumer(), cn, VCPU=2)
    code, out, _ = run("placement_status")
    assert code == 0, out
    assert out.count("Result: Success") == 7
    assert "Overall: Success" in out


@pytest.mark.django_db
def test_status_warns_on_over_capacity_and_names_the_provider():
    cn = make_provider("cn1", inventory={"VCPU": 4})
    allocate(make_consumer(), cn, VCPU=3)
    set_inventory(cn, {"VCPU": {"total": 4, "reserved": 2}})  # reserved raised below usage
    code, out, _ = run("placement_status")
    assert code == 1
    assert _result_of(out, "Usage within capacity") == "Warning"
    assert f"provider {cn.uuid} VCPU: used 3 > capacity 2" in out
    assert "Advice:" in out


@pytest.mark.django_db
def test_status_fails_on_allocation_without_inventory():
    cn = make_provider("cn1", inventory={"VCPU": 4})
    consumer = make_consumer()
    # no MEMORY_MB inventory: data the services refuse, which the check must find
    allocate(consumer, cn, VCPU=1, MEMORY_MB=64, unchecked=True)
    code, out, _ = run("placement_status")
    assert code == 2
    assert _result_of(out, "Allocations are backed by inventory") == "Failure"
    assert f"consumer {consumer.uuid} holds 64 MEMORY_MB on provider {cn.uuid}" in out


@pytest.mark.django_db
def test_status_fails_on_wrong_root_and_nested_sets():
    root = make_provider("root")
    other = make_provider("other")
    child = make_provider("child", parent=root)
    ResourceProvider.objects.filter(pk=child.pk).update(root=other)
    code, out, _ = run("placement_status")
    assert code == 2
    assert _result_of(out, "Provider trees are consistent") == "Failure"
    assert f"provider {child.uuid}: root is {other.uuid}" in out

    ResourceProvider.objects.filter(pk=child.pk).update(root=root, rght=99)
    code, out, _ = run("placement_status")
    assert code == 2
    assert "do not nest" in out or "rght is" in out


@pytest.mark.django_db
def test_status_fails_on_wrong_level():
    root = make_provider("root")
    child = make_provider("child", parent=root)
    ResourceProvider.objects.filter(pk=child.pk).update(level=3)
    code, out, _ = run("placement_status")
    assert code == 2
    assert f"provider {child.uuid}: level 3, depth in tree 1" in out


@pytest.mark.django_db
def test_status_warns_on_incomplete_and_empty_consumers(settings):
    cn = make_provider("cn1", inventory={"VCPU": 4})
    incomplete = make_consumer(project=settings.PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID)
    allocate(incomplete, cn, VCPU=1)
    empty = make_consumer(unchecked=True)  # the services never leave a consumer empty
    code, out, _ = run("placement_status")
    assert code == 1
    assert _result_of(out, "Consumers have a project, a user and allocations") == "Warning"
    assert f"incomplete consumer {incomplete.uuid}" in out
    assert f"empty consumer {empty.uuid}" in out


@pytest.mark.django_db
def test_status_warns_on_missing_standard_names():
    Trait.objects.filter(name="HW_NUMA_ROOT").delete()
    code, out, _ = run("placement_status")
    assert code == 1
    assert _result_of(out, "Standard resource classes and traits") == "Warning"
    assert "sync_standard" in out
    assert "HW_NUMA_ROOT" in out


def test_status_help_mentions_exit_codes():
    from allocations.management.commands.placement_status import Command
    assert "Exit status" in Command.help


@pytest.mark.django_db
def test_status_warns_when_the_api_may_open_more_connections_than_the_database_takes(
        settings):
    from django.db import connection

    settings.PLACEMENT_API_PROCESSES = {"nodes": 1, "workers": 1, "threads": 1}
    code, out, _ = run("placement_status")
    assert code == 0, out
    settings.PLACEMENT_API_PROCESSES = {"nodes": 40, "workers": 8, "threads": 16}
    code, out, _ = run("placement_status")
    if connection.vendor == "sqlite":
        assert code == 0 and "no connection limit" in out
        return
    assert code == 1, out
    assert "40 node(s) x 8 worker(s) x min(16 threads, max_pool_size 5) = 1600" in out
    assert "max_pool_size" in out.split("Advice:")[-1]
