"""Layout defects an operator saw, checked where they show: in the browser."""
import pytest

from tests.browser.conftest import screenshot
from tests.factories import allocate, make_consumer, make_provider


@pytest.fixture
def trees(operator):
    """Two trees whose rows have names and uuids of different lengths."""
    cn1 = make_provider("cn1", inventory={"MEMORY_MB": {"total": 4096, "max_unit": 2147483647}},
                        traits=["COMPUTE_NET_VIF_MODEL_E1000E"])
    make_provider("cn1-numa0-with-a-long-name", parent=cn1, inventory={"VCPU": 8})
    make_provider("n1", parent=cn1, inventory={"VCPU": 8})
    cn2 = make_provider("a-much-longer-compute-node-name-cn2", inventory={"VCPU": 16})
    allocate(make_consumer(), cn2, VCPU=5)
    return cn1


def test_usage_bars_line_up_and_uuids_stay_on_one_line(ui, trees):
    ui.goto("/ui/providers/")
    bars = ui.locator(".ptree .row:not(.head) .invgrid:not(.totals) .bar")
    boxes = [bars.nth(i).bounding_box() for i in range(bars.count())]
    assert len(boxes) >= 4
    screenshot(ui, "layout-provider-tree")
    assert len({round(box["x"]) for box in boxes}) == 1, boxes
    assert len({round(box["width"]) for box in boxes}) == 1, boxes
    for cell in ui.locator(".ptree .row:not(.head) .uuid").all():
        box = cell.bounding_box()
        line = float(cell.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || 16"))
        assert box["height"] < 2 * line, cell.inner_text()
    screenshot(ui, "layout-provider-tree")


def test_admin_shows_max_unit_and_trait_names_whole(ui, trees):
    ui.goto(f"/admin/providers/resourceprovider/{trees.pk}/change/")
    max_unit = ui.locator("input[name$='max_unit']").first
    assert max_unit.input_value() == "2147483647"
    assert max_unit.evaluate("e => e.scrollWidth <= e.clientWidth")
    trait = ui.locator(".select2-selection__rendered", has_text="COMPUTE_NET_VIF_MODEL_E1000E")
    assert trait.evaluate("e => e.scrollWidth <= e.clientWidth")
    screenshot(ui, "layout-admin-provider")
