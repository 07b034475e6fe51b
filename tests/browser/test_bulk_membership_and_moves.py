"""Issue 52's features in a real browser: an operator adds a trait to hosts chosen by
name, previews, applies and reverts the batch; and a move picker shows each target's
traits and aggregates against the source and keeps those with everything it has."""
import pytest

from providers.models import ResourceProvider
from tests.browser.conftest import screenshot
from tests.factories import allocate_across, make_consumer, make_provider

AZ1 = "5f2c7a34-3c0e-4d6e-8a43-0000000000a1"
AZ2 = "5f2c7a34-3c0e-4d6e-8a43-0000000000a2"


def traits(name):
    return sorted(ResourceProvider.objects.get(name=name).traits.values_list("name", flat=True))


@pytest.fixture
def cloud(operator):
    made = {}
    for name, vcpu, host_traits, aggs in (
            ("compute-1", 8, ["HW_CPU_X86_AVX2"], [AZ1]),
            ("compute-2", 16, ["HW_CPU_X86_AVX2"], [AZ1]),
            ("compute-3", 32, [], [AZ2]),
            ("storage-1", 0, [], [])):
        memory = {"MEMORY_MB": 2048 * vcpu} if vcpu else None
        made[name] = make_provider(name, inventory=memory,
                                   traits=host_traits, aggregates=aggs)
        if vcpu:
            made[f"{name}-numa0"] = make_provider(f"{name}-numa0", parent=made[name],
                                                  inventory={"VCPU": vcpu})
    vm = make_consumer(project="tenant-a", user="alice")
    allocate_across(vm, {made["compute-1-numa0"]: {"VCPU": 2},
                         made["compute-1"]: {"MEMORY_MB": 2048}})
    made["vm"] = vm
    return made


def test_add_a_trait_to_hosts_by_name_then_revert_the_batch(ui, cloud):
    ui.goto("/ui/bulk/")
    ui.get_by_role("link", name="Bulk edit of traits and aggregates").click()
    ui.fill("#filter-form input[name=name]", "compute-")
    ui.get_by_role("button", name="List providers").click()
    ui.get_by_role("button", name="Tick all on this page").click()
    ui.fill("textarea[name=add_traits]", "HW_CPU_X86_SSE42")
    ui.get_by_role("button", name="Preview").click()
    ui.wait_for_selector("table.preview")
    assert "6 of 6 providers would change" in ui.locator("#preview-summary").inner_text()
    assert "+HW_CPU_X86_SSE42" in ui.locator("tr[data-provider=compute-3]").inner_text()
    assert traits("compute-3") == []                 # the preview wrote nothing
    screenshot(ui, "bulk-traits-preview")
    ui.get_by_role("button", name="Apply to 6 providers").click()
    ui.wait_for_selector("#batch-revert")
    assert "changed the traits of 6 provider(s)" in ui.locator(".messages").inner_text()
    assert traits("compute-3") == ["HW_CPU_X86_SSE42"]
    assert traits("compute-1") == ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42"]
    screenshot(ui, "bulk-traits-batch")
    ui.get_by_role("button", name="Revert the whole batch").click()
    ui.wait_for_selector(".messages")
    assert "reverted on 6 provider(s)" in ui.locator(".messages").inner_text()
    assert traits("compute-3") == [] and traits("compute-1") == ["HW_CPU_X86_AVX2"]


def test_the_host_picker_shows_the_workload_and_keeps_hosts_with_everything(ui, cloud):
    vm = cloud["vm"]
    ui.goto(f"/ui/consumers/{vm.uuid}/")
    ui.get_by_role("link", name="Move everything on compute-1…").click()
    ui.wait_for_selector("#hosts")
    assert "Moving allocations does not move the instance." in ui.locator(
        "#not-the-instance").inner_text()
    hosts = ui.locator("#hosts tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.host)")
    assert hosts == ["compute-3", "compute-2"]       # most free room first
    assert "Lacks trait HW_CPU_X86_AVX2" in ui.locator(
        "#hosts tr[data-host=compute-3]").inner_text()
    assert "same traits and aggregates" in ui.locator(
        "#hosts tr[data-host=compute-2]").inner_text()
    screenshot(ui, "consumer-move-workload")
    ui.get_by_label("Only hosts with every trait and aggregate the source host has").check()
    ui.get_by_role("button", name="Search").click()
    ui.wait_for_selector("#hosts")
    hosts = ui.locator("#hosts tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.host)")
    assert hosts == ["compute-2"]
