"""Issue 52's four features in a real browser on the 3,000-provider cloud: the search box,
bulk traits and aggregates with its preview, the whole-host move picker keeping hosts
with everything the source has, and the history pages; each answers with what it
promises, none wider than the window at 1440 or 800 px, every control labelled
(check_widths), and nothing is written by looking."""
import re

from allocations.models import Allocation, Consumer
from providers.models import ProviderTrait, ResourceProvider
from tests.browser.scale import check_widths, cloud  # noqa: F401


def test_round_five_features_at_scale(ui, cloud):
    host = cloud.hosts[7]
    consumer = Consumer.objects.get(uuid=cloud.consumers[4])
    root = (ResourceProvider.objects.filter(allocations__consumer=consumer)
            .values_list("root__uuid", flat=True).first())
    traits_before = ProviderTrait.objects.count()
    ui.set_viewport_size({"width": 1440, "height": 900})

    # feature 3: the header's box, part of a host's name, then one host's exact name
    ui.goto("/ui/capacity/")
    box = ui.get_by_role("search").locator("input[name=find]")
    box.fill("cmp-000")
    box.press("Enter")
    ui.wait_for_url(re.compile(r"/ui/search/"))
    assert ui.locator("table.search-results a", has_text="cmp-0007").count() == 1
    check_widths(ui, "round-five-search-at-scale")
    box = ui.get_by_role("search").locator("input[name=find]")
    box.fill(host.uuid)
    box.press("Enter")
    ui.wait_for_url(re.compile(re.escape(f"/ui/providers/{host.uuid}/")))

    # feature 2: every provider chosen, a trait added, previewed (not applied)
    ui.goto("/ui/bulk/traits-aggregates/")
    assert ui.locator("h1").count() == 1
    check_widths(ui, "round-five-bulk-membership-at-scale")

    # feature 1: the whole-host picker, only hosts with everything the source has
    ui.goto(f"/ui/consumers/{consumer.uuid}/move-host-to?root={root}&same=on")
    summary = ui.locator("#host-summary").inner_text()
    assert "every trait and aggregate of the source" in summary, summary
    assert "does not move the instance" in ui.locator("main").inner_text()
    check_widths(ui, "round-five-host-picker-everything-at-scale")

    # feature 4: a host's history and VCPU across the cloud, drawn and listed
    for name, url in [("round-five-history-host-at-scale",
                       f"/ui/history/?provider={host.uuid}&window=30d"),
                      ("round-five-history-vcpu-at-scale",
                       "/ui/history/?resource_class=VCPU&window=30d")]:
        ui.goto(url)
        assert ui.locator("svg").count() >= 1, url
        assert "VCPU" in ui.locator("main").inner_text()
        check_widths(ui, name)

    assert Allocation.objects.filter(consumer=consumer).exists()   # nothing was moved
    assert ProviderTrait.objects.count() == traits_before          # nor tagged
