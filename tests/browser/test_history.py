"""An operator asks "when did this host fill up, and who did it?" in a real browser: the
provider page links to its history, which draws usage against capacity as an SVG chart,
marks the fill-up, opens the change that did it, and downloads the timeline as CSV."""
import csv
import io

import pytest

from foundation.actor import acting_as
from tests.browser.conftest import screenshot
from tests.factories import allocate, make_consumer, make_provider, set_inventory


@pytest.fixture
def filled_host(operator):
    """compute-9: VCPU 8 then 12; carol (project tenant-c) fills it with 12."""
    node = make_provider("compute-9", inventory={"VCPU": 8, "MEMORY_MB": 4096})
    set_inventory(node, {"VCPU": 12, "MEMORY_MB": 4096})
    with acting_as("carol", project_id="tenant-c", request_id="req-fill-up"):
        allocate(make_consumer(project="tenant-c"), node, VCPU=12, MEMORY_MB=1024)
    return node


def test_history_shows_the_fill_up_and_downloads_the_csv(ui, filled_host):
    ui.goto(f"/ui/providers/{filled_host.uuid}/")
    ui.locator("#history-links").get_by_role("link", name="this provider").click()
    ui.wait_for_selector("svg.history")
    assert ui.locator("section.history-chart").count() == 2     # MEMORY_MB and VCPU
    vcpu = ui.locator('section.history-chart[data-rc="VCPU"]')
    assert "Now 12 used of 12" in vcpu.inner_text()
    box = vcpu.locator("svg.history").bounding_box()
    assert box["width"] > 300 and box["height"] > 80            # drawn, not collapsed
    assert "full" in ui.locator("#fill-ups").inner_text()
    assert "carol" in ui.locator("#fill-ups").inner_text()
    screenshot(ui, "history-provider")

    vcpu.locator("circle.full").click()   # the marker opens the change that filled it
    row = ui.locator("#timeline tr.flag-over")
    row.wait_for()
    text = row.inner_text()
    assert "carol" in text and "tenant-c" in text and "req-fill-up" in text
    assert "claimed MEMORY_MB=1024, VCPU=12 on compute-9" in text
    assert "VCPU reached capacity" in text

    with ui.expect_download() as download:
        ui.get_by_role("link", name="Download as CSV").click()
    rows = list(csv.reader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    assert download.value.suggested_filename == "history.csv"
    assert rows[0][:4] == ["time", "provider_uuid", "provider_name", "actor"]
    filled = [row for row in rows[1:] if row[8] == "VCPU"]
    assert len(filled) == 1 and filled[0][3:6] == ["carol", "tenant-c", "req-fill-up"]
    assert len(rows) == 1 + ui.locator("#timeline tbody tr").count()
