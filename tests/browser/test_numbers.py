"""Amounts an operator reads on the provider list, a provider page and the capacity page:
grouped, with sizes beside memory and disk, huge values in short form, nothing clipped
or spilling into the next column, and no page wider than the window at 1440 and 800 px."""
import pytest

from tests.browser.conftest import screenshot
from tests.factories import allocate, make_consumer, make_provider, set_inventory

WIDTHS = (1440, 800)
HUGE_RATIO = 3.4e38


@pytest.fixture
def big_numbers(operator):
    """A memory-heavy host with a long-named class and a huge VCPU ratio, a child of it,
    and a host over capacity."""
    host = make_provider("mem-host-big-01", inventory={
        "MEMORY_MB": 87539712, "DISK_GB": 4096, "NET_BW_EGR_KILOBIT_PER_SEC": 2000000000,
        "VCPU": {"total": 64, "allocation_ratio": HUGE_RATIO}},
        traits=["HW_CPU_X86_AVX2", "COMPUTE_NET_VIF_MODEL_E1000E"])
    make_provider("mem-host-big-01-numa0", parent=host, inventory={"MEMORY_MB": 43769856})
    over = make_provider("over-host", inventory={"MEMORY_MB": 385024, "VCPU": 1650})
    allocate(make_consumer(), over, MEMORY_MB=385024, VCPU=1520)
    set_inventory(over, {"MEMORY_MB": 38500, "VCPU": 165})   # below usage, as the API allows
    allocate(make_consumer(), host, MEMORY_MB=1536, VCPU=3)
    return host


def overflow(page):
    """How far the page is wider than the window (px; 0 when it fits)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def spilled(page, selector):
    """Texts of the `selector` elements whose content is cut or runs past their box."""
    return page.locator(selector).evaluate_all(
        """els => els.filter(e => e.scrollWidth > e.clientWidth + 1
                      || e.getBoundingClientRect().right > e.parentElement.getBoundingClientRect().right + 1)
                    .map(e => e.textContent)""")


@pytest.mark.parametrize("width", WIDTHS)
def test_provider_list_numbers_fit_and_read(ui, big_numbers, width):
    ui.set_viewport_size({"width": width, "height": 900})
    for query, name in (("", "provider-list-numbers"),
                        ("?over_capacity=on", "provider-list-over-capacity-numbers")):
        ui.goto(f"/ui/providers/{query}")
        ui.locator(".ptree").wait_for()
        screenshot(ui, f"{name}-{width}")
        assert overflow(ui) <= 0
        # class names whole, and the inventory grid stays inside its column
        assert spilled(ui, ".ptree .invgrid .rc") == []
        assert spilled(ui, ".ptree .invgrid") == []
    ui.goto("/ui/providers/")
    text = ui.locator(".ptree").inner_text()
    assert "NET_BW_EGR_KILOBIT_PER_SEC" in text
    assert "1,536 / 87,539,712" in text
    assert "3 / 2.2e40" in text
    assert "385,024 / 38,500" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_provider_page_numbers_fit_and_read(ui, big_numbers, width):
    ui.set_viewport_size({"width": width, "height": 900})
    ui.goto(f"/ui/providers/{big_numbers.uuid}/")
    screenshot(ui, f"provider-page-numbers-{width}")
    assert overflow(ui) <= 0
    memory = ui.locator("#inventories + table tr", has_text="MEMORY_MB")
    assert "87,539,712" in memory.inner_text() and "83.5 TiB" in memory.inner_text()
    vcpu = ui.locator("#inventories + table tr", has_text="VCPU")
    huge = vcpu.locator("span[title]", has_text="2.2e40")
    assert huge.get_attribute("title").startswith("21,759,999,")   # the exact value on hover


@pytest.mark.parametrize("width", WIDTHS)
def test_capacity_page_numbers_fit_and_read(ui, big_numbers, width):
    ui.set_viewport_size({"width": width, "height": 900})
    ui.goto("/ui/capacity/")
    screenshot(ui, f"capacity-numbers-{width}")
    assert overflow(ui) <= 0
    memory = ui.locator("table.capacity tr[data-rc=MEMORY_MB]").inner_text()
    assert "131,348,068" in memory and "125.3 TiB" in memory   # host + numa0 + over-host
    over = ui.locator("table.capacity tr[data-rc=MEMORY_MB] td").last
    assert over.bounding_box()["x"] + over.bounding_box()["width"] <= width
