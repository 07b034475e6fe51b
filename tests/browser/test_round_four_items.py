"""Issue 43's items 5, 6, 7 and the provider list's host names (item 8) in a real
browser on the 3,000-provider generated cloud (tests/bigcloud.py): what the operator
reads and where the links lead, not only that the pages load."""
import csv
import io
import re

import pytest

from allocations.models import Consumer
from providers.models import Inventory, ResourceClass, ResourceProvider
from tests.bigcloud import AGGS
from tests.browser.conftest import screenshot
from tests.browser.scale import check_accessible, cloud  # noqa: F401
from tests.factories import allocate, allocate_across, make_consumer, make_provider

HOST = "numa-host.dc1.example.net"
# what the generated cloud has: 2,910 compute hosts, the odd ones with AVX2, in AGGS[i % 10]
AVX2_HOSTS, AGG3_HOSTS = 1455, 291

# every provider name cell of the list whose name is cut off: wider than its cell, or its
# link reaching past the cell's right edge
CLIPPED = """() => [...document.querySelectorAll('.ptree .row:not(.head) .name')]
  .filter(cell => { const link = cell.querySelector('a.pname');
    return cell.scrollWidth > cell.clientWidth
        || link.getBoundingClientRect().right > cell.getBoundingClientRect().right + 0.5; })
  .map(cell => cell.querySelector('a.pname').title)"""


def test_host_names_are_whole_in_the_provider_list_at_1440(ui, cloud):
    ui.set_viewport_size({"width": 1440, "height": 900})
    seen = []
    for url in ("/ui/providers/", "/ui/providers/?q=cmp-00"):
        ui.goto(url)
        names = ui.locator(".ptree .row:not(.head) .name > a.pname").evaluate_all(
            "links => links.map(a => a.title)")
        assert len(names) >= 20, url
        assert ui.evaluate(CLIPPED) == [], url
        screenshot(ui, f"provider-list-names-1440-{len(seen)}")
        seen += names
    # host names, and the roots named by their 36-character uuids (first on page 1)
    assert any(name.startswith("cmp-00") for name in seen)
    assert {root.name for root in cloud.uuid_roots} & set(seen)


@pytest.fixture
def numa_host(cloud):
    """A host of the cloud whose VCPU is on two NUMA nodes, with two instances."""
    root = make_provider(HOST, inventory={"MEMORY_MB": 65536}, traits=["HW_CPU_X86_AVX2"],
                         aggregates=[AGGS[3]])
    numa0 = make_provider(f"{HOST}-numa0", parent=root, inventory={"VCPU": 16})
    numa1 = make_provider(f"{HOST}-numa1", parent=root, inventory={"VCPU": 16})
    big = make_consumer(project="project-big", user="alice")
    small = make_consumer(project="project-abc", user="bob")
    allocate_across(big, {numa0: {"VCPU": 4}, root: {"MEMORY_MB": 4096}})
    allocate(small, numa1, VCPU=2)
    return {"root": root, "big": big, "small": small}


def test_a_host_page_shows_its_whole_tree(ui, numa_host):
    root, big, small = numa_host["root"], numa_host["big"], numa_host["small"]
    ui.goto(f"/ui/providers/{root.uuid}/")
    check_accessible(ui)
    # the VCPU held on the NUMA nodes is on the root's page
    usage = {cells[0]: cells[1:] for cells in ui.locator("#tree-usage-table tbody tr")
             .evaluate_all("rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))")}
    assert usage["VCPU"][:3] == ["2", "32", "6"]                 # providers, capacity, used
    consumers = ui.locator("#tree-consumers tbody tr")
    assert consumers.count() == 2
    assert f"VCPU=4 on {HOST}-numa0" in ui.locator("#tree-consumers").inner_text()
    # sortable: most VCPU first, then by project
    ui.locator("#tree-consumers thead a", has_text="VCPU").click()
    ui.wait_for_url(re.compile(r"consumers-sort=-VCPU"))
    assert consumers.first.locator("td").first.inner_text() == big.uuid
    ui.locator("#tree-consumers thead a", has_text="Project").click()
    ui.wait_for_url(re.compile(r"consumers-sort=project"))
    assert consumers.first.locator("td").first.inner_text() == small.uuid   # project-abc
    screenshot(ui, "host-page-whole-tree")
    # the CSV link: every allocation of the tree, by consumer
    href = ui.locator("#consumers a", has_text="Download CSV").get_attribute("href")
    answer = ui.request.get(href)
    assert answer.status == 200
    rows = list(csv.reader(io.StringIO(answer.text())))
    assert sorted((r[0], r[4], r[5], r[6]) for r in rows[1:]) == sorted([
        (big.uuid, HOST, "MEMORY_MB", "4096"), (big.uuid, f"{HOST}-numa0", "VCPU", "4"),
        (small.uuid, f"{HOST}-numa1", "VCPU", "2")])
    # traits and aggregates are links to the filtered provider list
    ui.locator("a.tag", has_text="HW_CPU_X86_AVX2").first.click()
    ui.wait_for_url(re.compile(r"/ui/providers/\?required=HW_CPU_X86_AVX2$"))
    assert f"{AVX2_HOSTS + 1:,} providers match" in ui.locator(".summary").inner_text()
    ui.go_back()
    ui.locator("a.tag.agg", has_text=AGGS[3]).first.click()
    ui.wait_for_url(re.compile(r"member_of="))
    assert f"{AGG3_HOSTS + 1:,} providers match" in ui.locator(".summary").inner_text()
    # the consumers list by host name, and "In tree of" with a host name
    ui.goto("/ui/consumers/")
    ui.fill("input[name=host]", HOST)
    ui.locator("input[name=host]").press("Enter")
    ui.wait_for_url(re.compile(r"host=numa-host"))
    listed = ui.locator("main table tbody tr td.mono a").all_inner_texts()
    assert sorted(listed) == sorted([big.uuid, small.uuid])
    check_accessible(ui)
    ui.goto("/ui/providers/")
    ui.fill("input[name=in_tree]", HOST)
    ui.click("#provider-filters button[type=submit]")
    ui.wait_for_url(re.compile(r"in_tree=numa-host"))
    shown = ui.locator(".ptree .row:not(.head) .name > a.pname").evaluate_all(
        "links => links.map(a => a.title)")
    assert shown == [HOST, f"{HOST}-numa0", f"{HOST}-numa1"]


def test_the_admin_refuses_to_delete_a_class_in_use_with_counts_and_links(ui, cloud):
    """The cloud's 40 agents have CUSTOM_BAREMETAL; three instances hold one each."""
    agents = list(ResourceProvider.objects.filter(parent__in=cloud.uuid_roots[:3]))
    for agent in agents:
        allocate(make_consumer(project="project-bm", user="ironic"), agent,
                 CUSTOM_BAREMETAL=1)
    baremetal = ResourceClass.objects.get(name="CUSTOM_BAREMETAL")
    ui.goto(f"/admin/providers/resourceclass/{baremetal.pk}/delete/")
    text = ui.locator("#content").inner_text()
    assert "CUSTOM_BAREMETAL is in the inventory of 40 providers" in text
    assert "3 consumers hold CUSTOM_BAREMETAL" in text
    assert "Inventory:" not in text                      # not a line per protected row
    assert ui.locator("#content input[type=submit]").count() == 0   # nothing to confirm
    screenshot(ui, "admin-resource-class-in-use")
    ui.locator("#content a", has_text="list them").click()
    ui.wait_for_url(re.compile(r"/ui/bulk/\?resource_class=CUSTOM_BAREMETAL"))
    assert "all 40, on every page" in ui.locator("main").inner_text()
    check_accessible(ui)
    ui.go_back()
    ui.locator("#content a", has_text="their providers").click()
    ui.wait_for_url(re.compile(r"/ui/capacity/\?rc=CUSTOM_BAREMETAL"))
    table = ui.locator("table.heat-table").inner_text()
    assert "40 providers" in ui.locator("main").inner_text()
    for agent in agents:
        assert agent.name in table
    check_accessible(ui)
    assert ResourceClass.objects.filter(name="CUSTOM_BAREMETAL").exists()


def test_the_status_page_lists_every_over_capacity_row_paged_with_names(ui, cloud):
    """60 hosts lose VCPU inventory under what their instances hold."""
    over = [host for i, host in enumerate(cloud.hosts) if i >= 100 and i % 8][:60]
    Inventory.objects.filter(provider__in=over, resource_class__name="VCPU").update(
        total=1, allocation_ratio=1.0)
    ui.goto("/ui/status/")
    section = ui.locator("#over-capacity")
    assert "Over capacity: 60 (provider, class) pairs" in section.locator("h2").inner_text()
    rows = section.locator("tbody tr")
    assert rows.count() == 50
    first_page = rows.locator("td:first-child a").all_inner_texts()
    assert all(name.startswith("cmp-") for name in first_page)
    check_accessible(ui)
    screenshot(ui, "status-over-capacity-page-1")
    section.locator("nav a", has_text="next").click()
    ui.wait_for_url(re.compile(r"over-page=2"))
    second_page = rows.locator("td:first-child a").all_inner_texts()
    assert len(second_page) == 10
    assert sorted(first_page + second_page) == sorted(h.name for h in over)
    name = second_page[0]
    rows.locator("td:first-child a", has_text=name).click()
    ui.wait_for_url(re.compile(r"/ui/providers/[0-9a-f-]+/$"))
    assert name in ui.locator("h1").inner_text()
    assert Consumer.objects.exists()
