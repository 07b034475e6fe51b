"""The allocation pages in a real browser on a cloud of 3,000 providers and 3,000 consumers
(issue 35): usages paged with totals and the CSV link on top; the consumer page's move
picker; neither page wider than the window at 1440 or 800 px."""
import re

from tests.browser.conftest import screenshot
from tests.browser.scale import check_widths, cloud  # noqa: F401 (cloud: a fixture)
from tests.factories import allocate, make_consumer


def test_usages_at_scale(ui, cloud):
    ui.click("header nav >> text=Usages")
    ui.wait_for_url(re.compile(r"/ui/usages/$"))
    rows = ui.locator("#usages tbody tr")
    assert rows.count() == 50
    summary = ui.locator("#usage-summary").inner_text()
    assert re.match(r"\d{4} groups · 3\d{3} consumers · rows 1–50\.", summary), summary
    # the export is reachable without scrolling: inside the first screen
    assert ui.locator("#usages-csv").bounding_box()["y"] < 400
    assert ui.locator("#usages tfoot tr.totals").inner_text().startswith("Total, all")
    check_widths(ui, "usages")

    ui.set_viewport_size({"width": 1440, "height": 900})
    ui.click("#usages thead >> text=VCPU")
    ui.wait_for_url(re.compile(r"sort=VCPU"))
    first = ui.locator("#usages tbody tr").first.locator("td.num").nth(3).inner_text()
    ui.locator(".pager >> text=next →").first.click()
    ui.wait_for_url(re.compile(r"page=2"))
    later = ui.locator("#usages tbody tr").first.locator("td.num").nth(3).inner_text()
    assert int(first.replace(",", "")) >= int(later.replace(",", ""))


def test_move_picker_at_scale(ui, cloud):
    vm = make_consumer(project="big", user="big")
    host = cloud.hosts[1]
    allocate(vm, host, MEMORY_MB=65536)
    allocate(vm, cloud.sharing[0], DISK_GB=500)
    ui.goto(f"/ui/consumers/{vm.uuid}/")
    ui.locator('#allocations tr[data-class="MEMORY_MB"] a', has_text="Move…").click()
    ui.wait_for_url(re.compile(r"/move-to\?"))
    assert ui.locator("#targets tbody tr").count() == 25
    assert re.match(r"\d,\d{3} of the \d,\d{3} other providers with MEMORY_MB inventory have "
                    r"room for 65,536 · 1–25 shown", ui.locator("#target-summary").inner_text())
    check_widths(ui, "consumer-move-picker")

    # a host every fifth of which is nearly full: searched for, it says why not
    ui.set_viewport_size({"width": 1440, "height": 900})
    ui.fill("#target-search input[name=q]", "cmp-0005")
    ui.click("#target-search button")
    ui.wait_for_url(re.compile(r"q=cmp-0005"))
    assert ui.locator("#targets").count() == 0
    why = ui.locator('#refused-targets tr[data-provider="cmp-0005.dc1.example.net"]')
    assert "MEMORY_MB: needs 65,536, free" in why.inner_text()
    screenshot(ui, "consumer-move-picker-why-not")

    # an unrelated tree asks to confirm before the move
    ui.fill("#target-search input[name=q]", "cmp-2001")
    ui.click("#target-search button")
    ui.wait_for_url(re.compile(r"q=cmp-2001"))
    row = ui.locator('#targets tr[data-provider="cmp-2001.dc1.example.net"]')
    assert "another tree" in row.inner_text()
    row.locator("input[name=unrelated_ok]").check()
    row.locator("button").click()
    ui.wait_for_url(re.compile(rf"/ui/consumers/{vm.uuid}/$"))
    assert ui.locator(".messages .success").inner_text() == (
        f"Moved MEMORY_MB=65536 of consumer {vm.uuid} from {host.name} to "
        "cmp-2001.dc1.example.net.")

    # and one allocation goes alone
    disk = ui.locator('#allocations tr[data-class="DISK_GB"]')
    disk.locator("button", has_text="Remove…").click()
    ui.wait_for_load_state()
    disk.locator("button", has_text="Remove it").click()
    ui.wait_for_url(re.compile(rf"/ui/consumers/{vm.uuid}/$"))
    assert ui.locator("#allocations tbody tr").count() == 1
    check_widths(ui, "consumer-page")
