"""The whole-cloud pages in a real browser: capacity and heatmap, status, resource classes
and traits (created, refused while in use, deleted), bulk edit with preview and apply."""
import re

import pytest
from django.db import transaction

from providers.models import Inventory, ProviderTrait, ResourceProvider, Trait
from providers.services import inventories as inventory_services
from tests.browser.conftest import screenshot
from tests.factories import allocate, make_consumer, make_provider


@pytest.fixture
def cloud(transactional_db):
    """Two compute nodes with NUMA children, a sharing disk, consumers; cn2-numa0 is over
    capacity (its inventory was lowered below its usage)."""
    made = {}
    for n in (1, 2):
        root = make_provider(f"cn{n}", inventory={"MEMORY_MB": {"total": 65536, "reserved": 512}})
        made[f"cn{n}"] = root
        for numa in (0, 1):
            made[f"cn{n}-numa{numa}"] = make_provider(
                f"cn{n}-numa{numa}", parent=root,
                inventory={"VCPU": {"total": 16, "allocation_ratio": 2.0}})
    made["disk"] = make_provider("shared-disk", inventory={"DISK_GB": 2000})
    vm1 = make_consumer(project="proj-a", user="alice", consumer_type="INSTANCE")
    vm2 = make_consumer(project="proj-b", user="bob")
    allocate(vm1, made["cn1-numa0"], VCPU=24)        # beyond the physical 16: over-committed
    allocate(vm1, made["cn1"], MEMORY_MB=32768)
    allocate(vm2, made["cn2-numa0"], VCPU=6)
    allocate(vm2, made["disk"], DISK_GB=500)
    with transaction.atomic():
        inventory_services.write_inventories(
            provider=ResourceProvider.objects.get(name="cn2-numa0"), capacity_rule=None,
            inventories={"VCPU": {"total": 2, "allocation_ratio": 2.0}})
    made["vm1"], made["vm2"] = vm1, vm2
    return made


def messages(page):
    return page.locator("ul.messages li").all_inner_texts()


def test_capacity_page_and_heatmap(ui, cloud):
    ui.click("header nav >> text=Capacity")
    ui.wait_for_url(re.compile(r"/ui/capacity/$"))
    assert ui.locator("nav a.active").inner_text() == "Capacity"
    vcpu = ui.locator('tr[data-rc="VCPU"] td')
    # 4 NUMA nodes: 16 + 16 + 16 + 2 VCPU at ratio 2; 24 + 6 allocated; free 8 + 32 + 32
    assert vcpu.all_inner_texts()[:7] == ["VCPU", "4", "50", "0", "100", "30", "72"]
    # beyond the physical amount: 24 - 16 on cn1-numa0, 6 - 2 on cn2-numa0
    assert ui.locator('tr[data-rc="VCPU"] .flag.commit').inner_text() == "12 on 2 providers"
    assert ui.locator('tr[data-rc="VCPU"] .flag.over').inner_text() == "1 provider"
    assert ui.locator('tr[data-rc="VCPU"]').get_attribute("class") == "flag-over"
    assert ui.locator('tr[data-rc="DISK_GB"] .flag').count() == 0

    cells = ui.locator(".heatmap a")
    assert cells.count() == 7           # every provider with inventory
    over = ui.locator(".heatmap a.h-over")
    assert over.count() == 1
    assert over.get_attribute("aria-label") == "cn2-numa0: VCPU 6 of 4 used (150.0%), over capacity"
    assert ui.locator(".heatmap a.h7").get_attribute("aria-label") == \
        "cn1-numa0: VCPU 24 of 32 used (75.0%)"
    assert ui.locator("table").last.locator("td").all_inner_texts()[:2] == ["cn2-numa0", "VCPU"]
    screenshot(ui, "capacity")
    # the map is one Tab stop; the arrow keys walk it (issue 43, item 8)
    assert ui.locator(".heatmap a:not([tabindex='-1'])").count() == 1
    cells.first.focus()
    ui.keyboard.press("ArrowRight")
    assert ui.evaluate("document.activeElement.getAttribute('aria-label')") == \
        cells.nth(1).get_attribute("aria-label")
    ui.keyboard.press("End")
    assert ui.evaluate("document.activeElement === document.querySelector('.heatmap a:last-child')")
    ui.keyboard.press("Tab")       # leaves the map at once
    assert ui.evaluate("!document.activeElement.closest('.heatmap')")

    ui.click('tr[data-rc="VCPU"] >> text=VCPU')
    ui.wait_for_url(re.compile(r"\?rc=VCPU#heatmap$"))
    assert ui.locator("h2#heatmap").inner_text() == "Providers by usage of VCPU"
    assert cells.count() == 4
    screenshot(ui, "capacity-heatmap-vcpu")
    over.click()
    ui.wait_for_url(re.compile(rf"/ui/providers/{cloud['cn2-numa0'].uuid}/$"))
    assert ui.locator("h1").inner_text() == "cn2-numa0"


def test_status_page(ui, cloud):
    ui.click("header nav >> text=Status")
    ui.wait_for_url(re.compile(r"/ui/status/$"))
    assert ui.locator("h1 .result").inner_text() == "Warning"
    assert ui.locator(".card.check").count() == 7
    assert ui.locator(".card.check.success").count() == 6
    capacity = ui.locator(".card.check", has_text="Usage within capacity")
    assert capacity.locator(".result").inner_text() == "Warning"
    assert (f"provider {cloud['cn2-numa0'].uuid} VCPU: used 6 > capacity 4"
            == capacity.locator(".examples").inner_text())
    assert capacity.locator(".advice").inner_text().startswith("Advice: This follows an inventory")
    assert ui.locator(".card.check.success .advice").count() == 0
    screenshot(ui, "status")


def test_create_and_delete_custom_trait(ui, cloud):
    ui.click("header nav >> text=Traits")
    ui.fill("#create-form input[name=name]", "gold")
    ui.click("#create-form button")
    assert ui.locator(".errorlist").inner_text().startswith(
        "Name: gold cannot be created: a new name must start with CUSTOM_ (e.g. CUSTOM_GOLD).")

    ui.fill("#create-form input[name=name]", "CUSTOM_GOLD")
    ui.click("#create-form button")
    assert messages(ui) == ["Created trait CUSTOM_GOLD."]
    row = ui.locator('tr[data-name="CUSTOM_GOLD"]')
    assert row.locator("td").nth(1).inner_text() == "0"

    ProviderTrait.objects.create(provider=cloud["cn1"], trait=Trait.objects.get(name="CUSTOM_GOLD"))
    ui.reload()
    assert "in use" in row.inner_text()
    row.locator("button", has_text="delete").click()
    assert messages(ui) == ["The trait CUSTOM_GOLD is in use by a resource provider."]
    screenshot(ui, "traits-refused")

    ProviderTrait.objects.filter(trait__name="CUSTOM_GOLD").delete()
    row.locator("button", has_text="delete").click()
    ui.locator("#confirm").wait_for()       # asked first
    assert Trait.objects.filter(name="CUSTOM_GOLD").exists()
    screenshot(ui, "traits-delete-confirm")
    ui.locator("#confirm").get_by_role("button", name="Delete CUSTOM_GOLD").click()
    assert messages(ui) == ["Deleted trait CUSTOM_GOLD."]
    assert row.count() == 0

    ui.fill("form.inline input[name=q]", "numa")
    ui.click("form.inline >> text=Filter")
    assert ui.locator("details.standard").get_attribute("open") is not None
    assert ui.locator('tr[data-name="HW_NUMA_ROOT"]').is_visible()


def test_create_and_delete_custom_resource_class(ui, cloud):
    ui.click("header nav >> text=Resource classes")
    ui.fill("#create-form input[name=name]", "CUSTOM_fpga")
    ui.click("#create-form button")
    assert ui.locator(".errorlist").inner_text() == (
        "Name: CUSTOM_fpga cannot be created: after CUSTOM_ only upper-case letters, digits "
        "and underscores are allowed (e.g. CUSTOM_FPGA).")

    ui.fill("#create-form input[name=name]", "CUSTOM_FPGA")
    ui.click("#create-form button")
    assert messages(ui) == ["Created resource class CUSTOM_FPGA."]
    ui.fill("#create-form input[name=name]", "CUSTOM_FPGA")
    ui.click("#create-form button")
    assert ui.locator(".errorlist").inner_text() == (
        "Name: Conflicting resource class already exists: CUSTOM_FPGA")

    make_provider("fpga-host", inventory={"CUSTOM_FPGA": 2})
    ui.goto("/ui/resource-classes/")
    row = ui.locator('tr[data-name="CUSTOM_FPGA"]')
    assert row.locator("td").nth(1).inner_text() == "1"
    row.locator("button", has_text="delete").click()
    assert messages(ui) == ["Error in delete resource class: Cannot delete resource class "
                            "CUSTOM_FPGA. Class is in use in inventory."]
    screenshot(ui, "resource-classes-refused")

    Inventory.objects.filter(resource_class__name="CUSTOM_FPGA").delete()
    row.locator("button", has_text="delete").click()
    ui.locator("#confirm").get_by_role("button", name="Delete CUSTOM_FPGA").click()
    assert messages(ui) == ["Deleted resource class CUSTOM_FPGA."]
    assert row.count() == 0
    assert ui.locator('tr[data-name="VCPU"] button').count() == 0   # standard: no delete


def test_bulk_edit_preview_and_apply(ui, cloud):
    ui.click("header nav >> text=Bulk edit")
    ui.select_option("#filter-form select[name=resource_class]", "VCPU")
    ui.fill("#filter-form input[name=tree]", "cn1")          # a host's tree, by its name
    ui.click("#filter-form button")
    # rows.all() and count() do not wait: read them once the filtered page has loaded
    ui.wait_for_url(re.compile(r"/ui/bulk/\?resource_class=VCPU&.*tree=cn1"))
    rows = ui.locator("table.bulk tbody tr")
    assert [r.get_attribute("data-provider") for r in rows.all()] == ["cn1-numa0", "cn1-numa1"]

    ui.fill("#filter-form input[name=tree]", "")
    ui.click("#filter-form button")
    ui.wait_for_url(re.compile(r"/ui/bulk/\?resource_class=VCPU&.*tree=$"))
    assert rows.count() == 4
    # nothing is ticked until the operator ticks it
    assert ui.locator("table.bulk input[name=provider]:checked").count() == 0
    ui.get_by_role("button", name="Tick all on this page").click()
    assert ui.locator("table.bulk input[name=provider]:checked").count() == 4
    ui.uncheck('input[aria-label="cn2-numa1"]')
    ui.fill("#change-form input[name=allocation_ratio]", "1.25")
    screenshot(ui, "bulk-list")
    ui.click("#change-form >> text=Preview")
    ui.wait_for_url(re.compile(r"/ui/bulk/preview$"))

    preview = ui.locator("table.preview tbody tr")
    outcome = {r.get_attribute("data-provider"): r.get_attribute("class") for r in preview.all()}
    # cn1-numa0 holds 24 VCPU: 16 * 1.25 = 20 is not enough; cn2-numa0 is over already
    assert outcome == {"cn1-numa0": "goes-over", "cn1-numa1": "ok", "cn2-numa0": "stays-over"}
    over = ui.locator('tr[data-provider="cn1-numa0"]')
    assert "32 → 20" in over.inner_text()
    assert cloud["vm1"].uuid in over.locator("ul.holders").inner_text()
    screenshot(ui, "bulk-preview")
    # "Apply to all" goes nowhere without accepting that cn1-numa0 goes over
    ui.get_by_role("button", name="Apply to all 3").click()
    ui.wait_for_selector(".messages")
    assert "1 provider(s) would go over capacity" in messages(ui)[0]
    assert Inventory.objects.get(provider__name="cn1-numa1").allocation_ratio == 2.0
    ui.go_back()
    ui.wait_for_url(re.compile(r"/ui/bulk/preview$"))

    # someone changes cn2-numa0 between the preview and the apply
    numa = ResourceProvider.objects.get(name="cn2-numa0")
    inventory_services.inventory_set(provider=numa, resource_class="VCPU",
                                     generation=numa.generation, record={"total": 8})
    ui.get_by_role("button", name=re.compile("Apply only where it stays within capacity")).click()
    ui.wait_for_url(re.compile(r"/ui/bulk/batch/req-[0-9a-f-]+/$"))
    shown = messages(ui)
    assert re.fullmatch(r"Batch req-[0-9a-f-]+: set VCPU allocation_ratio 1\.25 on 1 "
                        r"provider\(s\): cn1-numa1\.", shown[0])
    assert shown[1].startswith("Conflict: cn2-numa0 was changed by someone else since the preview")
    ratios = dict(Inventory.objects.filter(resource_class__name="VCPU")
                  .values_list("provider__name", "allocation_ratio"))
    assert ratios == {"cn1-numa0": 2.0, "cn1-numa1": 1.25, "cn2-numa0": 1.0, "cn2-numa1": 2.0}
    screenshot(ui, "bulk-applied")

    # the batch, undone in one click
    ui.get_by_role("button", name="Revert the whole batch").click()
    ui.wait_for_selector(".messages")
    assert re.fullmatch(r"Batch req-[0-9a-f-]+ reverted on 1 provider\(s\): cn1-numa1\.",
                        messages(ui)[0])
    assert Inventory.objects.get(provider__name="cn1-numa1").allocation_ratio == 2.0
    screenshot(ui, "bulk-batch-reverted")


def test_usages_csv_link(ui, cloud):
    ui.click("header nav >> text=Usages")
    with ui.expect_download() as download:
        ui.click("text=Download CSV")
    path = download.value.path()
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    assert lines[0] == "Project,User,Consumer type,Consumers,DISK_GB,MEMORY_MB,VCPU"
    assert lines[1:] == ["proj-a,alice,INSTANCE,1,,32768,24", "proj-b,bob,unknown,1,500,,6"]
