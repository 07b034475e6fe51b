"""The allocation pages in a real browser on a cloud of 3,000 providers and 3,000 consumers
(issue 35): usages paged with totals and the CSV link on top; the consumer page's move
picker; neither page wider than the window at 1440 or 800 px."""
import re

import pytest

from tests.bigcloud import build_cloud
from tests.browser.conftest import screenshot

WIDTHS = (1440, 800)


@pytest.fixture
def cloud(operator):
    return build_cloud(providers=3000, consumers=3000)


def page_overflow(page):
    """How many px the document is wider than the window (0: no horizontal scroll)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def check_widths(page, name):
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert page_overflow(page) <= 0, f"{name} overflows at {width} px"
        screenshot(page, f"{name}-{width}")


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
