"""An operator edits a provider in a real browser: an inventory cut below usage is
explained and saved only on confirmation, a deletion asks first, and a refusal is
explained with the provider's name and the typed values kept."""
import re

import pytest

from providers.models import Inventory
from tests.browser.conftest import screenshot
from tests.factories import allocate, make_consumer, make_provider


@pytest.fixture
def cn(operator):
    """A compute node holding MEMORY_MB=34816 of an instance, and DISK_GB nobody holds."""
    node = make_provider("compute-7", inventory={"MEMORY_MB": 65536, "DISK_GB": 500})
    vm = make_consumer(project="tenant-a", user="alice")
    allocate(vm, node, MEMORY_MB=34816)
    return node, vm


def total(provider, rc):
    return Inventory.objects.get(provider=provider, resource_class__name=rc).total


def test_cut_below_usage_is_explained_then_saved_on_confirmation(ui, cn):
    node, vm = cn
    ui.goto(f"/ui/providers/{node.uuid}/?edit=MEMORY_MB#inventory-form")
    form = ui.locator("#inventory-form form")
    form.locator("input[name=total]").fill("20000")
    form.locator("button[type=submit]").click()
    confirm = ui.locator("#confirm")
    confirm.wait_for()
    text = confirm.inner_text()
    assert "compute-7 becomes over capacity for MEMORY_MB" in text
    assert "but 34,816 is already allocated" in text
    assert f"{vm.uuid}: MEMORY_MB=34816" in text
    screenshot(ui, "provider-inventory-below-usage-confirm")
    assert total(node, "MEMORY_MB") == 65536          # nothing saved yet
    confirm.get_by_role("button", name="Save with less capacity").click()
    ui.wait_for_selector(".messages")
    assert "Updated MEMORY_MB inventory of compute-7: total 65,536 → 20,000." in ui.locator(".messages").inner_text()
    assert total(node, "MEMORY_MB") == 20000
    screenshot(ui, "provider-inventory-below-usage-saved")


def test_deleting_an_inventory_asks_first(ui, cn):
    node, _ = cn
    ui.goto(f"/ui/providers/{node.uuid}/")
    ui.get_by_title("Delete the DISK_GB inventory").click()
    confirm = ui.locator("#confirm")
    assert "Delete the DISK_GB inventory of compute-7?" in confirm.inner_text()
    assert Inventory.objects.filter(provider=node, resource_class__name="DISK_GB").exists()
    confirm.get_by_role("button", name="Delete DISK_GB").click()
    ui.wait_for_selector(".messages")
    assert not Inventory.objects.filter(provider=node, resource_class__name="DISK_GB").exists()


def test_a_refusal_is_explained_with_names_and_typed_values_kept(ui, cn):
    node, vm = cn
    ui.goto(f"/ui/providers/{node.uuid}/")
    # deleting a class that is in use: refused at the top of the page, in Placement's
    # words, naming the provider and who holds the class; no form is in error
    ui.get_by_title("Delete the MEMORY_MB inventory").click()
    refusal = ui.locator("#refusal")
    refusal.wait_for()
    message = refusal.inner_text()
    assert "MEMORY_MB is in use by 1 consumer" in message
    assert f"{vm.uuid}: MEMORY_MB=34816" in message
    assert "in use" in message and "compute-7" in message and node.uuid not in message
    assert refusal.bounding_box()["y"] < ui.locator("#inventories").bounding_box()["y"]
    assert ui.locator("#inventory-form .errorlist").count() == 0
    screenshot(ui, "provider-inventory-delete-refused")
    # the page shows the generation the API has: the next save is no false conflict
    node.refresh_from_db()
    assert ui.locator("#inventory-form input[name=generation]").input_value() == str(
        node.generation)
    # the same form then adds or updates, never deletes: an unknown class is refused
    # and the form keeps what the operator typed
    form = ui.locator("#inventory-form form")
    form.locator("input[name=resource_class]").fill("CUSTOM_NOPE")
    form.locator("input[name=total]").fill("3")
    form.locator("button[type=submit]").click()
    errors = ui.locator("#inventory-form .errorlist").first
    errors.wait_for()
    assert ("Unknown resource class in inventory for resource provider compute-7: "
            "No such resource class CUSTOM_NOPE.") in errors.inner_text()
    form = ui.locator("#inventory-form form")
    assert form.locator("input[name=resource_class]").input_value() == "CUSTOM_NOPE"
    assert form.locator("input[name=total]").input_value() == "3"
    screenshot(ui, "provider-refusal-explained")


def test_ui_paths_without_a_slash_redirect_and_unknown_pages_are_html(ui):
    ui.goto("/ui")
    assert re.search(r"/ui/$", ui.url)
    response = ui.goto("/ui/providers/00000000-0000-0000-0000-00000000beef/")
    assert response.status == 404
    assert "text/html" in response.headers["content-type"]


@pytest.fixture
def busy_node(operator):
    """A compute node with 40 instances: its allocations table is long."""
    node = make_provider("compute-9", inventory={"MEMORY_MB": 65536, "VCPU": 64})
    for _ in range(40):
        allocate(make_consumer(project="tenant-b", user="bob"), node, MEMORY_MB=1024, VCPU=1)
    return node


def in_view(locator):
    return locator.evaluate(
        # a fraction of a pixel above the top (sub-pixel layout) is still in view
        "e => { const r = e.getBoundingClientRect(); return r.top > -1 && r.top < innerHeight; }")


def test_usage_comes_first_and_the_confirmation_shows_where_the_operator_looks(ui, busy_node):
    ui.goto(f"/ui/providers/{busy_node.uuid}/")
    assert in_view(ui.locator("#inventories"))   # usage vs capacity on the first screen
    assert (ui.locator("#inventories").bounding_box()["y"]
            < ui.get_by_role("heading", name="Consumers").bounding_box()["y"])
    ui.goto(f"/ui/providers/{busy_node.uuid}/?edit=MEMORY_MB#inventory-form")
    form = ui.locator("#inventory-form form")
    form.locator("input[name=total]").fill("30000")   # below the 40,960 allocated
    form.locator("button[type=submit]").click()
    confirm = ui.locator("#confirm")
    confirm.wait_for()
    assert "but 40,960 is already allocated" in confirm.inner_text()
    assert in_view(confirm)
    screenshot(ui, "provider-confirm-in-view")
    # the address left in the bar leads back to the provider page, not an error
    ui.goto(ui.url.split("#")[0])
    assert ui.url.rstrip("/").endswith(busy_node.uuid)
    assert ui.locator("#confirm").count() == 0
    assert total(busy_node, "MEMORY_MB") == 65536


def test_updating_only_the_total_keeps_the_other_fields_regression_issue_43(ui, operator):
    """Issue 43, item 1, as the operator did it: VCPU (reserved 4, max_unit 96, ratio 4.0,
    capacity 368) updated with "VCPU" and total 96 typed into the blank form."""
    host = make_provider("host-43", inventory={"VCPU": {
        "total": 96, "reserved": 4, "max_unit": 96, "allocation_ratio": 4.0}})
    ui.goto(f"/ui/providers/{host.uuid}/#inventory-form")
    form = ui.locator("#inventory-form form")
    for name in ("reserved", "min_unit", "max_unit", "step_size", "allocation_ratio"):
        assert form.locator(f"input[name={name}]").input_value() == ""
    form.locator("input[name=resource_class]").fill("VCPU")
    form.locator("input[name=total]").fill("96")
    form.locator("button[type=submit]").click()
    ui.wait_for_selector(".messages")
    assert "VCPU inventory of host-43 unchanged." in ui.locator(".messages").inner_text()
    inv = Inventory.objects.get(provider=host)
    assert (inv.reserved, inv.max_unit, inv.allocation_ratio) == (4, 96, 4.0)
    # a real cut (total 48) is shown before -> after and saved only once confirmed
    form = ui.locator("#inventory-form form")
    form.locator("input[name=resource_class]").fill("VCPU")
    form.locator("input[name=total]").fill("48")
    form.locator("button[type=submit]").click()
    confirm = ui.locator("#confirm")
    confirm.wait_for()
    assert "VCPU capacity of host-43 falls from 368 to 176." in confirm.inner_text()
    screenshot(ui, "provider-inventory-capacity-drop-confirm")
    assert total(host, "VCPU") == 96
    confirm.get_by_role("button", name="Save with less capacity").click()
    ui.wait_for_selector(".messages")
    assert "total 96 → 48" in ui.locator(".messages").inner_text()
    inv = Inventory.objects.get(provider=host)
    assert (inv.total, inv.reserved, inv.max_unit, inv.allocation_ratio) == (48, 4, 96, 4.0)
