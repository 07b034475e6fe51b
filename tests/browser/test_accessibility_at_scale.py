"""Issue 35 item 11 in a real browser, on a cloud of 3,000 providers: the capacity
heatmap read without hovering and without colour (each cell's accessible name, the
"!" on a cell over capacity, the legend in words, the table of the same providers),
and the provider list with its filters shown and a provider page with every form
control labelled, no id twice and the skip link first."""
import re

from providers.models import ResourceProvider
from tests.bigcloud import AGGS, HOST_DISK, HOST_VCPU, NEARLY_FULL_MEMORY, host_name
from tests.browser.conftest import screenshot
from tests.browser.scale import check_widths, cloud  # noqa: F401 (a fixture)
from tests.factories import set_inventory

# what a style gives a pseudo-element ("none" when it has none)
PSEUDO = "(e, which) => getComputedStyle(e, which).content"


def test_heatmap_numbers_without_hover_or_colour(ui, cloud):
    squeezed = cloud.hosts[0]   # holds NEARLY_FULL_MEMORY: lowered below it, over capacity
    set_inventory(squeezed, {"VCPU": {"total": HOST_VCPU, "allocation_ratio": 4.0},
                             "MEMORY_MB": 200000, "DISK_GB": HOST_DISK})
    ui.goto("/ui/capacity/")
    # every one has inventory: a page of the map holds at most 800 cells and 120 KiB of
    # them (this cloud's names and two classes a host make fewer: the page stays < 200 KiB)
    shown = ui.locator(".heatmap a").count()
    assert 400 < shown < 800
    assert f"cells 1–{shown:,} of {cloud.providers:,}" in ui.locator(
        "nav[aria-label='heat map pages']").inner_text()
    check_widths(ui, "capacity-at-scale")
    ui.set_viewport_size({"width": 1440, "height": 900})
    # the browser's accessible name of the cell: the numbers, and over capacity in words
    cell = ui.get_by_role("link", name=re.compile("^" + re.escape(host_name(0)) + ":"))
    name = cell.evaluate("e => e.getAttribute('aria-label')")
    assert f"MEMORY_MB {NEARLY_FULL_MEMORY:,} of 200,000 used (125.0%)" in name
    assert name.endswith(", over capacity")
    assert cell.get_attribute("title") is None
    # more than colour: the cell carries a "!", and so does the legend's swatch
    assert cell.evaluate(PSEUDO, "::before") == '"!"'
    assert ui.locator("#heat-legend .h-over").evaluate(PSEUDO, "::before") == '"!"'
    legend = ui.locator("#heat-legend").inner_text()
    assert "0–10%" in legend and "90–100%" in legend and legend.endswith("over capacity")
    # focused from the keyboard, the cell shows its numbers under the map
    cell.focus()
    assert cell.evaluate(PSEUDO, "::after") == f'"{name}"'
    screenshot(ui, "capacity-cell-focused")

    # the table of the same providers, fullest first: the squeezed host leads, said in words
    ui.click("text=The same providers as a table")
    ui.wait_for_function("location.hash === '#providers-table'")
    first = ui.locator(".heat-table tbody tr").first
    assert [" ".join(text.split()) for text in first.locator("td").all_inner_texts()] == [
        host_name(0), "MEMORY_MB", "250,000 244.1 GiB", "200,000 195.3 GiB", "125.0%",
        "over capacity"]
    assert ui.locator(".heat-table tbody tr").count() == 50
    screenshot(ui, "capacity-table")
    ui.click(".heat-table thead >> text=Provider")
    ui.wait_for_url(re.compile(r"sort=name#providers-table$"))
    ui.locator(".pager:not([aria-label='heat map pages'])").get_by_text("next →").first.click()
    ui.wait_for_url(re.compile(r"sort=name&page=2#providers-table$"))
    assert ui.locator(".heat-table tbody tr").first.locator("td").first.inner_text() == \
        ResourceProvider.objects.order_by("name").values_list("name", flat=True)[50]


def test_provider_list_with_filters_shown_is_labelled(ui, cloud):
    ui.goto(f"/ui/providers/?required=HW_CPU_X86_AVX2&required=!CUSTOM_X&member_of={AGGS[1]}")
    # one box per parameter plus an empty one, each named after its filter
    assert ui.locator("#provider-filters input[name=required]").count() == 3
    assert ui.get_by_role("searchbox", name=re.compile(r"^Traits")).count() == 3
    assert ui.get_by_role("searchbox", name=re.compile(r"^Member of")).count() == 2
    check_widths(ui, "providers-filtered-at-scale")


def test_provider_page_is_labelled(ui, cloud):
    ui.goto(f"/ui/providers/{cloud.hosts[1].uuid}/")
    # the traits and aggregates boxes are named, and say how to fill them in
    for label, described in (("Trait names", "complete trait set"),
                             ("Aggregate uuids", "complete aggregate set")):
        box = ui.get_by_label(label, exact=True)
        assert box.evaluate("e => e.tagName") == "TEXTAREA"
        assert described in box.evaluate(
            "e => document.getElementById(e.getAttribute('aria-describedby')).textContent")
    check_widths(ui, "provider-page-at-scale")   # no id twice, every control labelled
