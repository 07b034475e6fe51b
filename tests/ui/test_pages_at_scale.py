"""The allocation and candidates pages at cloud scale (issue 35): 3,000 providers and
3,000 consumers (tests/bigcloud.py); each page reads a bounded number of queries.

Usages (item 9): groups paged, totalled over every group, sortable, the CSV link above
the table. Moving an allocation (item 4): a searchable picker of the providers with
room, not a capped list."""
import csv
import io
import re

import pytest
from django.urls import reverse

from allocations import selectors
from allocations.models import Allocation, Consumer
from console.consumers.move_targets import move_choice
from allocations.rules import InventoryLimits, move_refusal
from providers.models import Inventory
from allocations.usage import with_usage
from providers.rules import reported_capacity
from console.sorting import name_order
from tests.bigcloud import AGGS, HOST_MEMORY, NEARLY_FULL_MEMORY, build_cloud, host_name
from tests.factories import allocate, make_consumer

pytestmark = pytest.mark.django_db


@pytest.fixture
def cloud(db):
    return build_cloud(providers=3000, consumers=3000)


def test_usages_page_is_paged_with_totals_of_every_group(client, cloud, django_assert_max_num_queries):
    with django_assert_max_num_queries(8):
        response = client.get(reverse("ui:usages"))
    assert response.status_code == 200
    totals = response.context["totals"]
    page = response.context["page"]
    assert len(response.context["table"]) == 50
    assert page.paginator.count == totals["groups"] > 2000
    assert totals["consumers"] == Consumer.objects.count()
    by_class = dict(zip(response.context["classes"], totals["amounts"]))
    assert by_class["VCPU"] == sum(Allocation.objects.filter(resource_class__name="VCPU")
                                   .values_list("used", flat=True))
    body = response.content.decode()
    # the export link comes before the table, the totals row after its rows
    assert body.index('id="usages-csv"') < body.index('<table id="usages"')
    assert body.index("<tfoot>") > body.index("<tbody>")
    assert f"Total, all {totals['groups']} groups" in body

    last = client.get(reverse("ui:usages"), {"page": page.paginator.num_pages})
    assert last.context["page"].number == page.paginator.num_pages
    assert last.context["totals"] == totals


def test_usages_sorted_by_a_class_and_the_csv_follows(client, cloud):
    response = client.get(reverse("ui:usages"), {"group_by": "project", "sort": "VCPU"})
    rows = response.context["table"]
    i = response.context["classes"].index("VCPU")
    amounts = [row["amounts"][i] for row in rows]
    assert amounts == sorted(amounts, reverse=True) and len(rows) == 50
    smallest = client.get(reverse("ui:usages"), {"group_by": "project", "sort": "-VCPU"})
    assert smallest.context["table"][0]["amounts"][i] == min(
        int(r["VCPU"]) for r in _csv_rows(client, {"group_by": "project"}))
    exported = _csv_rows(client, {"group_by": "project", "sort": "VCPU"})
    assert len(exported) == 100   # every project, not one page
    assert [int(r["VCPU"]) for r in exported[:50]] == amounts


def _csv_rows(client, params):
    response = client.get(reverse("ui:usages-csv"), params)
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_move_picker_at_scale(client, cloud, django_assert_max_num_queries):
    vm = make_consumer(project="big", user="big")
    host = cloud.hosts[1]
    allocate(vm, host, MEMORY_MB=65536)
    allocate(vm, cloud.sharing[0], DISK_GB=500)
    url = reverse("ui:consumer-move-target", args=[vm.uuid])
    params = {"provider": host.uuid, "resource_class": "MEMORY_MB"}
    # 8: the page's trees' traits and aggregates against the source's are one more (issue 52)
    with django_assert_max_num_queries(8) as captured:
        response = client.get(url, params)
    # the database counts, orders and pages: no query reads every inventory of the class
    assert all("LIMIT" in q["sql"] or q["sql"].startswith("SELECT COUNT(")
               for q in captured.captured_queries if '"inventories"' in q["sql"])
    page = response.context["page"]
    # every host but the source and the nearly full ones (every fifth) has room; no cap
    hosts = len(cloud.hosts)
    nearly_full = len(range(0, hosts, 5))
    uuid_trees = len(cloud.uuid_roots)   # Ironic-like roots with memory, all empty
    assert page.paginator.count == hosts - 1 - nearly_full + uuid_trees
    assert len(page.object_list) == 25
    # the consumer's disk is on a sharing provider serving the first third of the
    # hosts: those come first (related), most free room first
    assert response.context["choice"].related_roots == [cloud.sharing[0].name]
    assert all(t.related for t in page.object_list)
    free = [t.free for t in page.object_list]
    assert free == sorted(free, reverse=True)
    last = client.get(url, {**params, "page": page.paginator.num_pages}).context["page"]
    assert not any(t.related for t in last.object_list)   # hosts beyond the disk's reach

    with django_assert_max_num_queries(9):   # and the matching ones without room
        searched = client.get(url, {**params, "q": host_name(5)[:8]})   # "cmp-0005"
    assert [t.name for t in searched.context["page"]] == []
    (refused,) = searched.context["refused"]
    free = HOST_MEMORY - 4096 - NEARLY_FULL_MEMORY
    assert refused.name == host_name(5)
    assert refused.refusal == ("capacity", f"needs 65,536, free {free:,} (capacity "
                                           f"{HOST_MEMORY - 4096:,}, used {NEARLY_FULL_MEMORY:,})")

    disk = client.get(url, {"provider": cloud.sharing[0].uuid, "resource_class": "DISK_GB"})
    targets = list(disk.context["page"])
    # the other sharing disks serve the host's tree, and the host holds the memory:
    # related, first; other hosts' own DISK_GB is another tree
    assert [t.name for t in targets[9:11]] == [host.name, host_name(0)]
    assert [t.related for t in targets[:11]] == [True] * 10 + [False]


def test_move_picker_pages_hold_what_move_refusal_accepts_in_order(cloud):
    """Every page of the picker read at once: exactly the targets the write's own test
    (move_refusal) accepts, over every inventory of the class, related first, then
    most free room, then name; with unit limits the capacity alone would pass, and
    memory the consumer already holds on a target counted against them."""
    vm = make_consumer(project="big", user="big")
    host, stepped, capped = cloud.hosts[1], cloud.hosts[2], cloud.hosts[3]
    allocate(vm, host, MEMORY_MB=65536)
    allocate(vm, stepped, MEMORY_MB=2048)    # 65,536 more: 67,584, not a step of 4,096
    allocate(vm, capped, MEMORY_MB=2048)     # 67,584 > max_unit 66,000
    allocate(vm, cloud.sharing[0], DISK_GB=500)
    memory = Inventory.objects.filter(resource_class__name="MEMORY_MB")
    memory.filter(provider=stepped).update(step_size=4096)
    memory.filter(provider=capped).update(max_unit=66000)
    memory.filter(provider__in=cloud.hosts[10:20]).update(max_unit=32768)
    memory.filter(provider__in=cloud.hosts[20:30]).update(step_size=3000)
    memory.filter(provider__in=cloud.hosts[30:40]).update(min_unit=131072)
    held = selectors.consumer_allocation_rows(consumer_id=vm.id)
    (allocation,) = [a for a in held if a.provider_id == host.id]

    choice = move_choice(allocation=allocation, held=held)
    fitting = choice.page.paginator
    shown = fitting.object_list[0:fitting.count]

    holds = {stepped.id: 2048, capped.id: 2048}
    accepted = {}
    for rp_id, name, total, reserved, ratio, min_unit, max_unit, step, used in with_usage(
            memory.exclude(provider=host)).values_list(
            "provider_id", "provider__name", "total", "reserved", "allocation_ratio",
            "min_unit", "max_unit", "step_size", "used"):
        limits = InventoryLimits(total, reserved, min_unit, max_unit, step, ratio)
        if move_refusal(65536, holds.get(rp_id, 0), used, limits) is None:
            accepted[name] = reported_capacity(total, reserved, ratio) - used
    assert {t.name: t.free for t in shown} == accepted
    assert len(shown) == fitting.count < choice.with_inventory - 30
    assert stepped.name not in accepted and capped.name not in accepted
    order = [(not t.related, -t.free, t.name) for t in shown]
    assert order == sorted(order)
    assert shown[0].related and not shown[-1].related


def test_why_not_at_scale(client, cloud, django_assert_max_num_queries):
    params = {"q": "resources=VCPU:1,MEMORY_MB:16384&required=HW_CPU_X86_AVX2",
              "version": "1.39", "tree": "cmp-00", "excluded": "on"}
    with django_assert_max_num_queries(25):
        response = client.get(reverse("ui:why-not"), params)
    explanation = response.context["explanation"]
    assert explanation["page"]["trees"] == 100   # cmp-0000 .. cmp-0099
    # even hosts lack AVX2, every fifth is nearly full: only the odd ones not full fit
    shown = [t["root"]["name"] for t in response.context["trees"]]
    assert shown == [host_name(i) for i in range(20) if i % 2 == 0 or i % 5 == 0]
    summary = dict((label, trees) for label, trees, _ in response.context["summary"])
    assert summary["missing trait HW_CPU_X86_AVX2"] == 10
    assert summary["not enough free MEMORY_MB"] == 4


def test_candidates_in_other_orders_at_scale(client, cloud, django_assert_max_num_queries):
    """Sorted or narrowed, the whole answer is arranged before it is paged; a page costs
    a bounded number of queries all the same."""
    def page(at_most, **params):
        with django_assert_max_num_queries(at_most):
            return client.get(reverse("ui:candidates"), {
                "q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39", **params}).context

    total = page(10)["total"]
    by_name = page(11, order="name")
    assert by_name["total"] == total
    names = [g["name"] for g in by_name["tree_groups"]]
    assert names == sorted(names, key=name_order)
    # the uuid-named trees that sort before "cmp-…", then the first hosts, on page 1
    first_host = names.index(host_name(0))
    assert set(names[:first_host]) <= {r.name for r in cloud.uuid_roots}
    assert names[first_host:] == [host_name(i) for i in range(len(names) - first_host)]

    rooms = [int(row["room"].rstrip("%")) for number in (1, 2)
             for row in page(10, order="most_room", page=number)["candidate_rows"]]
    assert len(rooms) == 100 and rooms == sorted(rooms, reverse=True)

    named = page(11, host="cmp-00")
    # cmp-0000 .. cmp-0099 (even the nearly full ones have room for 512 MB)
    assert (named["total"], named["answered"]) == (100, total)


def test_provider_page_pages_the_consumers_it_serves(client, cloud, django_assert_max_num_queries):
    """A sharing disk serving hundreds of instances: its page lists them 50 at a time
    (a page of every holder took 600 ms at 3,000)."""
    disk = cloud.sharing[0]
    holders = sorted(set(Allocation.objects.filter(provider=disk)
                         .values_list("consumer__uuid", flat=True)))
    assert len(holders) > 100
    url = reverse("ui:provider", args=[disk.uuid])
    with django_assert_max_num_queries(15):
        response = client.get(url)
    page = response.context["consumer_page"]
    assert page.paginator.count == len(holders) and page.paginator.num_pages == 3
    assert [e["uuid"] for e in response.context["consumers"]] == holders[:50]
    assert response.context["consumers"][0]["resources"] == [("DISK_GB", 40, disk.name)]
    body = response.content.decode()
    assert f"{len(holders)} consumers, 1–50 shown" in body
    assert 'consumers-page=2#consumers">next' in body
    last = client.get(url, {"consumers-page": 3, "log-page": 1})
    assert [e["uuid"] for e in last.context["consumers"]] == holders[100:]
    assert 'log-page=1&amp;consumers-page=2#consumers">← previous' in last.content.decode()


def _pages(cloud):
    """(url, params, most queries) of the operator pages and the admin pages operators
    use, on the 3,000 / 3,000 cloud. The counts include the session and the user; a
    query per row (N+1) would add hundreds."""
    host, disk, tree = cloud.hosts[7], cloud.sharing[0], cloud.uuid_roots[0]
    consumer = Consumer.objects.get(uuid=cloud.consumers[4])
    roots = [h.uuid for h in cloud.hosts[:500]]
    providers, admin_providers = reverse("ui:providers"), reverse(
        "admin:providers_resourceprovider_changelist")
    change = "admin:providers_resourceprovider_change"
    return [
        (reverse("ui:dashboard"), {}, 7),
        (providers, {}, 10),
        (providers, {"page": 20}, 10),
        (providers, {"sort": "-usage", "usage_of": "MEMORY_MB"}, 12),
        (providers, {"resources": "VCPU:4", "required": "HW_CPU_X86_AVX2"}, 15),
        (providers, {"member_of": AGGS[4], "required": "!HW_CPU_X86_AVX2"}, 14),
        (providers, {"over_capacity": "on"}, 12),
        (providers, {"q": "cmp-01"}, 12),
        (reverse("ui:providers-csv"), {"sort": "-usage"}, 9),
        (reverse("ui:provider-subtree", args=[tree.uuid]), {}, 9),
        # two more with change log entries (count, page), as with consumers below
        (reverse("ui:provider", args=[host.uuid]), {}, 15),
        (reverse("ui:provider", args=[disk.uuid]), {}, 15),
        (reverse("ui:status"), {}, 12),   # + every over-capacity pair, paged: count, page; unallocatable inventories
        (reverse("ui:resource-classes"), {}, 5),
        (reverse("ui:traits"), {}, 3),
        # history: the scope, its usage now, the window's entries, the log's oldest, names
        (reverse("ui:history"), {"provider": host.uuid}, 7),
        (reverse("ui:history"), {"tree": host.uuid, "window": "30d"}, 7),
        (reverse("ui:history"), {"aggregate": AGGS[4]}, 7),
        (reverse("ui:history"), {"resource_class": "VCPU", "window": "24h"}, 7),
        (reverse("ui:history"), {}, 6),
        (reverse("ui:history-csv"), {"resource_class": "MEMORY_MB"}, 7),
        # paged (50 a page): a count, then the page
        (reverse("ui:bulk"), {"resource_class": "MEMORY_MB"}, 6),
        (reverse("ui:usages"), {"group_by": "user", "sort": "VCPU"}, 7),
        (reverse("ui:usages-csv"), {}, 4),
        (reverse("ui:consumers"), {}, 6),
        (reverse("ui:consumers"), {"project": "project-001", "page": 2}, 6),
        (reverse("ui:consumer", args=[consumer.uuid]), {}, 9),   # + the hosts it is on
        # every tree explained at once for the cloud-wide answer: still a fixed number
        (reverse("ui:why-not"), {"q": "resources=VCPU:1,MEMORY_MB:16384", "version": "1.39"},
         13),
        (reverse("admin:index"), {}, 3),
        (admin_providers, {}, 5),
        (admin_providers, {"p": 20}, 5),
        (admin_providers, {"q": "cmp-01"}, 5),
        (reverse(change, args=[host.pk]), {}, 9),
        (reverse(change, args=[disk.pk]), {}, 9),
        (reverse("admin:providers_resourceprovider_add"), {}, 3),
        (reverse("admin:autocomplete"), {"term": "cmp-01", "app_label": "providers",
                                         "model_name": "resourceprovider",
                                         "field_name": "parent"}, 4),
        (reverse("admin:allocations_consumer_changelist"), {}, 6),
        (reverse("admin:allocations_consumer_change", args=[consumer.pk]), {}, 7),
        (reverse("admin:allocations_project_changelist"), {}, 5),
        (reverse("admin:allocations_user_changelist"), {}, 5),
        (reverse("admin:providers_changerecord_changelist"), {}, 6),
    ], roots


def test_every_page_reads_a_bounded_number_of_queries(client, cloud,
                                                      django_assert_max_num_queries):
    pages, roots = _pages(cloud)
    for url, params, most in pages:
        with django_assert_max_num_queries(most, info=url):
            response = client.get(url, params)
        assert response.status_code == 200, (url, params)
    with django_assert_max_num_queries(5):
        preview = client.post(reverse("ui:bulk-preview"), {
            "resource_class": "MEMORY_MB", "provider": roots, "allocation_ratio": "1.5"})
    assert len(preview.context["rows"]) == 500


def test_room_order_of_a_limited_answer_with_sharing_providers(client, cloud):
    """A limited walk reads the first trees only; the sharing disks (the last roots) are
    read apart, and their room counts as any provider's."""
    from tests.bigcloud import SHARED_AGG

    params = {"q": f"resources=VCPU:1,DISK_GB:1500&member_of={SHARED_AGG}&limit=60",
              "version": "1.39", "order": "least_room"}
    context = client.get(reverse("ui:candidates"), params).context
    assert context["total"] == 60
    rooms = [int(row["room"].rstrip("%")) for row in context["candidate_rows"]]
    assert rooms == sorted(rooms)
    # 1,500 of a host's 2,000 GB leaves 25%; of a sharing disk's 100,000 (3,000 used)
    # 95.5%, less than any host's VCPU leaves
    assert rooms[0] == 25 and rooms[-1] == 96


def test_heat_map_pages_are_cut_by_size_and_hold_every_provider_once(client, cloud):
    """800 cells of long names and two classes each made a capacity page over 200 KiB:
    a page of the map holds at most 800 cells and a size budget of their HTML."""
    from django.db.models import Value
    from django.db.models.functions import Concat

    from providers.models import ResourceProvider

    ResourceProvider.objects.update(name=Concat(Value("rack-" + "r" * 140 + "-"), "uuid"))
    seen, sizes, counts, url = [], [], [], reverse("ui:capacity")
    page = 1
    while True:
        response = client.get(url, {"map": page})
        assert response.status_code == 200
        body = response.content.decode()
        grid = body.split('<div class="heatmap"')[1].split("</div>")[0]
        cells = re.findall(r'<a href="/ui/providers/([0-9a-f-]{36})/"', grid)
        seen += cells
        sizes.append(len(response.content))
        counts.append(len(cells))
        if "next →" not in body.split('aria-label="heat map pages"')[1].split("</nav>")[0]:
            break
        page += 1
    assert sorted(seen) == sorted(str(u) for u in ResourceProvider.objects.values_list(
        "uuid", flat=True))
    assert max(sizes) < 200 * 1024 and max(counts) < 800
    last = client.get(url, {"map": page + 5})   # past the end: the last page
    assert last.context["heat_page"].number == page
    assert client.get(url, {"map": "x"}).context["heat_page"].number == 1


def test_a_page_of_candidates_with_long_names_stays_under_200_kib(client, cloud):
    """50 candidates with their provider summaries and 145-character names: the raw
    answer (most of a page's weight on big trees) shows inline only when small."""
    from django.db.models import Value
    from django.db.models.functions import Concat

    from providers.models import ResourceProvider

    ResourceProvider.objects.update(name=Concat(Value("rack-" + "r" * 140 + "-"), "uuid"))
    for query in ("resources=VCPU:1,MEMORY_MB:512", "resources=VCPU:1,MEMORY_MB:512,DISK_GB:10"):
        response = client.get(reverse("ui:candidates"), {"q": query, "version": "1.39",
                                                         "order": "most_room"})
        assert response.status_code == 200
        assert len(response.context["candidate_rows"]) >= 50
        raw = response.context["raw"]
        assert raw is None or len(raw) <= 32 * 1024
        assert len(response.content) < 200 * 1024, (query, len(response.content))
