"""A move that knows the workload: both move pickers show how each target's traits and
aggregates differ from the source tree's, filter on "has everything the source has",
say that moving allocations does not move the instance, and sort alike (most free
room first; issue 52 row 10)."""
import pytest
from django.urls import reverse

from allocations.models import Consumer
from tests.factories import allocate_across, make_consumer, make_provider

pytestmark = pytest.mark.django_db

AZ1 = "5f2c7a34-3c0e-4d6e-8a43-0000000000a1"
AZ2 = "5f2c7a34-3c0e-4d6e-8a43-0000000000a2"


@pytest.fixture
def cloud(db):
    """src (AVX2, AZ1; VCPU on a NUMA node, MEMORY_MB on the root) holding vm; targets
    a-small (AVX2, AZ1, little room), b-big (no AVX2, AZ2, much room), c-mid (AVX2,
    AZ1 and SSE42, some room)."""
    made = {}
    for name, vcpu, traits, aggs in (
            ("src", 8, ["HW_CPU_X86_AVX2"], [AZ1]),
            ("a-small", 4, ["HW_CPU_X86_AVX2"], [AZ1]),
            ("b-big", 64, [], [AZ2]),
            ("c-mid", 16, ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42"], [AZ1])):
        root = make_provider(name, inventory={"MEMORY_MB": 65536}, traits=traits,
                             aggregates=aggs)
        made[name] = root
        made[f"{name}-numa0"] = make_provider(f"{name}-numa0", parent=root,
                                              inventory={"VCPU": vcpu},
                                              traits=["HW_NUMA_ROOT"])
    vm = make_consumer(project="p", user="u")
    allocate_across(vm, {made["src-numa0"]: {"VCPU": 2}, made["src"]: {"MEMORY_MB": 1024}})
    made["vm"] = Consumer.objects.get(uuid=vm.uuid)
    return made


def host_picker(client, cloud, **params):
    return client.get(reverse("ui:consumer-move-tree-target", args=[cloud["vm"].uuid]),
                      {"root": cloud["src"].uuid, **params})


def one_picker(client, cloud, **params):
    return client.get(reverse("ui:consumer-move-target", args=[cloud["vm"].uuid]),
                      {"provider": cloud["src-numa0"].uuid, "resource_class": "VCPU",
                       **params})


def test_the_two_pickers_sort_alike_most_free_room_first(client, cloud):
    hosts = [row["root"].name for row in host_picker(client, cloud).context["rows"]]
    assert hosts == ["b-big", "c-mid", "a-small"]          # not by name
    targets = [t.root_name for t in one_picker(client, cloud).context["page"].object_list]
    assert targets == hosts


def test_the_host_picker_sorts_by_the_scarcest_class(client, cloud):
    # b-big has the most VCPU but almost no memory left: its room is its memory's
    make_provider("d-full", inventory={"MEMORY_MB": 1024})
    big = cloud["b-big"]
    from providers.models import Inventory
    Inventory.objects.filter(provider=big, resource_class__name="MEMORY_MB").update(total=2048)
    hosts = [row["root"].name for row in host_picker(client, cloud).context["rows"]]
    assert hosts == ["c-mid", "a-small", "b-big"]


def test_each_target_shows_its_differences_from_the_source(client, cloud):
    response = host_picker(client, cloud)
    rows = {row["root"].name: row["difference"] for row in response.context["rows"]}
    assert rows["a-small"].same
    assert rows["b-big"].missing_traits == ["HW_CPU_X86_AVX2"]
    assert rows["b-big"].missing_aggregates == [AZ1]
    assert rows["b-big"].extra_aggregates == [AZ2]
    assert rows["c-mid"].has_everything and rows["c-mid"].extra_traits == ["HW_CPU_X86_SSE42"]
    body = response.content.decode()
    assert "Lacks trait <span class=\"mono\">HW_CPU_X86_AVX2</span>" in body
    assert "same traits and aggregates" in body
    targets = {t.root_name: t.difference for t in one_picker(client, cloud).context["page"]
               .object_list}
    assert targets["b-big"].missing_traits == ["HW_CPU_X86_AVX2"]
    assert targets["a-small"].same


def test_has_everything_the_source_has_filters_both_pickers(client, cloud):
    response = host_picker(client, cloud, same="on")
    assert [row["root"].name for row in response.context["rows"]] == ["c-mid", "a-small"]
    assert "every trait and aggregate of the source" in response.content.decode()
    response = one_picker(client, cloud, same="on")
    assert [t.root_name for t in response.context["page"].object_list] == ["c-mid", "a-small"]


def test_the_pickers_say_moving_allocations_does_not_move_the_instance(client, cloud):
    for response in (host_picker(client, cloud), one_picker(client, cloud)):
        body = response.content.decode()
        assert "Moving allocations does not move the instance." in body
        assert "HW_CPU_X86_AVX2" in body and AZ1 in body


def test_the_pickers_read_in_a_fixed_number_of_queries(client, cloud,
                                                         django_assert_max_num_queries):
    for i in range(20):
        root = make_provider(f"extra{i:02}", inventory={"MEMORY_MB": 4096},
                             traits=["HW_CPU_X86_AVX2"], aggregates=[AZ1])
        make_provider(f"extra{i:02}-numa0", parent=root, inventory={"VCPU": 8},
                      traits=["HW_NUMA_ROOT"])
    with django_assert_max_num_queries(18):
        assert len(host_picker(client, cloud, same="on").context["rows"]) == 22
    with django_assert_max_num_queries(18):
        assert len(one_picker(client, cloud, same="on").context["page"].object_list) == 22


def test_the_filters_are_one_subquery_each_whatever_the_number_of_names(cloud):
    """A subquery a class, trait and aggregate made MariaDB plan a join of 25 tables for
    a tree with three classes, four traits and an aggregate (27 s at 3,000 providers):
    the classes, the traits and the aggregates are one grouped subquery each."""
    from allocations import tree_moves
    from console.consumers import workload

    source = workload.Membership(traits={"HW_CPU_X86_AVX2", "HW_NUMA_ROOT", "CUSTOM_A",
                                         "CUSTOM_B"}, aggregates={AZ1, AZ2})
    hosts = tree_moves.target_hosts(classes={"VCPU", "MEMORY_MB", "DISK_GB"},
                                    exclude_root_id=cloud["src"].id,
                                    narrow=workload.has_everything_q(source, root="id"))
    assert str(hosts.query).count("IN (SELECT") == 3
    # and still every one of them: c-mid has AVX2 and HW_NUMA_ROOT and is in AZ1 only
    source = workload.Membership(traits={"HW_CPU_X86_AVX2", "HW_NUMA_ROOT"},
                                 aggregates={AZ1})
    hosts = tree_moves.target_hosts(classes={"VCPU", "MEMORY_MB"},
                                    exclude_root_id=cloud["src"].id,
                                    narrow=workload.has_everything_q(source, root="id"))
    assert sorted(h.name for h in hosts) == ["a-small", "c-mid"]
    hosts = tree_moves.target_hosts(classes={"VCPU", "MEMORY_MB", "DISK_GB"},
                                    exclude_root_id=cloud["src"].id)
    assert list(hosts) == []                       # no tree holds DISK_GB
