"""Issue 43's pages in a real browser on the 3,000-provider cloud: none wider than the
window at 1440 or 800 px, every control labelled, no id twice (check_widths)."""
from allocations.models import Allocation, Consumer
from providers.models import ResourceProvider
from tests.browser.conftest import screenshot
from tests.browser.scale import WIDEST, WIDTHS, check_widths, cloud, page_overflow  # noqa: F401


def test_round_four_pages_fit_the_window(ui, cloud):
    host = cloud.hosts[7]
    consumer = Consumer.objects.get(uuid=cloud.consumers[4])
    root = (ResourceProvider.objects.filter(allocations__consumer=consumer)
            .values_list("root__uuid", flat=True).first())
    pages = [
        ("consumers-list", "/ui/consumers/"),
        ("consumers-on-a-host", f"/ui/consumers/?host={host.name}"),
        ("whole-host-move-picker", f"/ui/consumers/{consumer.uuid}/move-host-to?root={root}"),
        ("host-page", f"/ui/providers/{host.uuid}/"),
        ("status-at-scale", "/ui/status/"),
        ("bulk-list-at-scale", "/ui/bulk/?resource_class=VCPU"),
        ("capacity-page-2", "/ui/capacity/?map=2"),
    ]
    for name, url in pages:
        ui.set_viewport_size({"width": 1440, "height": 900})
        ui.goto(url)
        assert ui.locator("h1").count() >= 1, url
        check_widths(ui, name)
    assert Allocation.objects.filter(consumer=consumer).exists()   # nothing was written
    # the admin's own page (its own skip link): only its width
    ui.goto(f"/admin/providers/resourceprovider/{host.pk}/change/")
    for width in WIDTHS:
        ui.set_viewport_size({"width": width, "height": 900})
        assert page_overflow(ui) <= 0, (width, ui.evaluate(WIDEST))
    screenshot(ui, "admin-provider-change-800")
