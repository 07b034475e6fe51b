"""A host's page shows its whole tree (issue 43, item 5): usage and consumers of every
provider below it, sortable and as CSV; traits and aggregates link to filtered lists; the
consumers list filters by host; "In tree of" takes a host name."""
import csv
import io

import pytest
from django.urls import reverse

from tests.factories import allocate, make_consumer
from tests.ui.conftest import AGG

pytestmark = pytest.mark.django_db


def test_a_root_shows_its_whole_trees_usage_and_consumers(client, sample):
    cn1, vm1 = sample["cn1"], sample["vm1"]
    other = make_consumer(project="proj-c", user="carol")
    allocate(other, sample["numa1"], VCPU=1)
    response = client.get(reverse("ui:provider", args=[cn1.uuid]))
    usage = {row.resource_class: (row.providers, row.capacity, row.used)
             for row in response.context["tree_usage"]}
    assert usage == {"MEMORY_MB": (1, 4000, 2048), "VCPU": (2, 16, 7)}   # the NUMA nodes' VCPU
    consumers = response.context["consumers"]
    assert [c["uuid"] for c in consumers] == sorted([vm1.uuid, other.uuid])
    held = {c["uuid"]: c["resources"] for c in consumers}
    assert held[vm1.uuid] == [("MEMORY_MB", 2048, "cn1"), ("VCPU", 6, "cn1-numa0")]
    body = response.content.decode()
    assert "VCPU=6 on cn1-numa0" in body and "43.8%" in body      # 7 of 16
    by_vcpu = client.get(reverse("ui:provider", args=[cn1.uuid]), {"consumers-sort": "-VCPU"})
    assert [c["uuid"] for c in by_vcpu.context["consumers"]] == [vm1.uuid, other.uuid]
    by_project = client.get(reverse("ui:provider", args=[cn1.uuid]),
                            {"consumers-sort": "project"})
    assert [c["project"] for c in by_project.context["consumers"]] == ["proj-a", "proj-c"]
    junk = client.get(reverse("ui:provider", args=[cn1.uuid]), {"consumers-sort": "-NOPE"})
    assert junk.status_code == 200 and junk.context["consumer_sort"] == "consumer"


def test_the_trees_consumers_as_csv(client, sample):
    cn1, vm1 = sample["cn1"], sample["vm1"]
    response = client.get(reverse("ui:provider-consumers-csv", args=[cn1.uuid]))
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["consumer", "project", "user", "type", "provider", "resource_class", "used"]
    assert rows[1:] == [[vm1.uuid, "proj-a", "alice", "INSTANCE", "cn1", "MEMORY_MB", "2048"],
                        [vm1.uuid, "proj-a", "alice", "INSTANCE", "cn1-numa0", "VCPU", "6"]]


def test_traits_and_aggregates_link_to_the_filtered_list(client, sample):
    body = client.get(reverse("ui:provider", args=[sample["cn1"].uuid])).content.decode()
    assert f'href="{reverse("ui:providers")}?required=HW_CPU_X86_AVX2"' in body
    assert f'href="{reverse("ui:providers")}?member_of={AGG}"' in body


def test_consumers_list_by_host_and_in_tree_of_a_host_name(client, sample):
    vm1, vm2 = sample["vm1"], sample["vm2"]
    response = client.get(reverse("ui:consumers"), {"host": "cn1"})
    assert [row["consumer"].uuid for row in response.context["rows"]] == [vm1.uuid]
    assert [row["consumer"].uuid for row in client.get(
        reverse("ui:consumers"), {"host": sample["cn2"].uuid}).context["rows"]] == [vm2.uuid]
    unknown = client.get(reverse("ui:consumers"), {"host": "nowhere"})
    assert unknown.context["form"].errors["host"] == [
        "No resource provider is named or has the uuid “nowhere”."]
    assert not unknown.context["rows"]
    providers = client.get(reverse("ui:providers"), {"in_tree": "cn1"})
    assert providers.status_code == 200
    body = providers.content.decode()
    assert "cn1-numa0" in body and "cn2" not in body.split('id="content"')[-1].split("<table")[-1]
    nameless = client.get(reverse("ui:providers"), {"in_tree": "nowhere"})
    assert "No resource provider is named “nowhere”." in nameless.content.decode()


def test_the_status_page_lists_every_over_capacity_row_paged_with_names(client, db):
    """Issue 43, item 7: 5 of 43 rows were shown, as bare uuids."""
    from tests.factories import make_provider

    for n in range(55):
        host = make_provider(f"full-{n:02}", inventory={"VCPU": 2})
        allocate(make_consumer(), host, unchecked=True, VCPU=3)
    first = client.get(reverse("ui:status"))
    assert first.context["over"].paginator.count == 55
    assert [row.provider_name for row in first.context["over_rows"]][:2] == ["full-00", "full-01"]
    assert len(first.context["over_rows"]) == 50
    body = first.content.decode()
    assert "Over capacity: 55 (provider, class) pairs" in body
    assert '">full-07</a></td><td class="rc">VCPU</td>' in body and "150.0%" in body
    second = client.get(reverse("ui:status"), {"over-page": 2})
    assert [row.provider_name for row in second.context["over_rows"]] == [
        f"full-{n}" for n in range(50, 55)]


def test_one_percentage_for_one_usage_on_every_page(client, db):
    """Issue 43, item 8: 106.3 % on the dashboard, 106.2 % on the capacity page."""
    from tests.factories import make_provider

    host = make_provider("odd", inventory={"VCPU": {"total": 15, "allocation_ratio": 1.07}})
    allocate(make_consumer(), host, unchecked=True, VCPU=17)       # 17 of 16 whole units
    shown = "17 of 16 (106.2%)"
    assert shown in client.get(reverse("ui:provider", args=[host.uuid])).content.decode()
    capacity = client.get(reverse("ui:capacity")).content.decode()
    assert "VCPU 17 of 16 used (106.2%)" in capacity
    assert shown in client.get(reverse("ui:dashboard")).content.decode()
