"""An operator moves a whole instance to another host in one write, adds an allocation,
and undoes the move from the change log with one click (real browser)."""
import pytest

from allocations.models import Allocation
from tests.browser.conftest import screenshot
from tests.factories import allocate_across, make_consumer, make_provider


@pytest.fixture
def vm(operator):
    """compute-1 and compute-2 (VCPU on two NUMA nodes, MEMORY_MB on the root); an
    instance holding VCPU 4 on compute-1-numa0 and MEMORY_MB 4096 on compute-1."""
    nodes = {}
    for host in ("compute-1", "compute-2"):
        nodes[host] = make_provider(host, inventory={"MEMORY_MB": 16384})
        for numa in ("numa0", "numa1"):
            nodes[f"{host}-{numa}"] = make_provider(f"{host}-{numa}", parent=nodes[host],
                                                    inventory={"VCPU": 8})
    consumer = make_consumer(project="tenant-a", user="alice")
    allocate_across(consumer, {nodes["compute-1-numa0"]: {"VCPU": 4},
                               nodes["compute-1"]: {"MEMORY_MB": 4096}})
    return consumer


def holdings(consumer):
    return sorted(Allocation.objects.filter(consumer__uuid=consumer.uuid)
                  .values_list("provider__name", "resource_class__name", "used"))


def test_move_a_whole_instance_then_revert_it(ui, vm):
    ui.goto(f"/ui/consumers/{vm.uuid}/")
    ui.get_by_role("link", name="Move everything on compute-1…").click()
    ui.wait_for_selector("#hosts")
    row = ui.locator("#hosts tr[data-host=compute-2]")
    assert "VCPU=4 → compute-2-numa0" in row.inner_text()
    assert "MEMORY_MB=4,096 → compute-2" in row.inner_text()
    screenshot(ui, "consumer-whole-host-move-picker")
    row.get_by_role("button", name="Move everything to compute-2").click()
    ui.wait_for_selector(".messages")
    assert "from compute-1 to compute-2 in one write" in ui.locator(".messages").inner_text()
    assert holdings(vm) == [("compute-2", "MEMORY_MB", 4096), ("compute-2-numa0", "VCPU", 4)]
    screenshot(ui, "consumer-whole-host-moved")
    # the change log puts it back, once the freeing of compute-2 is confirmed
    ui.locator("#change-log tbody tr").first.get_by_role("button", name="Revert").click()
    ui.wait_for_selector("#confirm")
    assert "VCPU on compute-2-numa0: 4 → 0 (removed)" in ui.locator("#confirm").inner_text()
    assert holdings(vm) == [("compute-2", "MEMORY_MB", 4096), ("compute-2-numa0", "VCPU", 4)]
    screenshot(ui, "consumer-revert-confirmation")
    ui.get_by_role("button", name="Revert and free it").click()
    ui.wait_for_selector(".messages")
    assert "Reverted change" in ui.locator(".messages").inner_text()
    assert holdings(vm) == [("compute-1", "MEMORY_MB", 4096), ("compute-1-numa0", "VCPU", 4)]


def test_add_an_allocation_and_a_bad_amount_is_a_form_error(ui, vm):
    ui.goto(f"/ui/consumers/{vm.uuid}/")
    form = ui.locator("#add-allocation form")
    form.get_by_label("Provider (name or uuid)").fill("compute-1-numa1")
    form.get_by_label("Class").fill("VCPU")
    form.get_by_label("Amount").fill("99")
    form.get_by_role("button", name="Add").click()
    ui.wait_for_selector(".messages")
    assert "Not added:" in ui.locator(".messages").inner_text()
    form = ui.locator("#add-allocation form")
    form.get_by_label("Provider (name or uuid)").fill("compute-1-numa1")
    form.get_by_label("Class").fill("VCPU")
    form.get_by_label("Amount").fill("2")
    form.get_by_role("button", name="Add").click()
    ui.wait_for_selector(".messages")
    assert "Added VCPU=2 on compute-1-numa1" in ui.locator(".messages").inner_text()
    assert ("compute-1-numa1", "VCPU", 2) in holdings(vm)
