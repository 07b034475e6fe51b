"""The consumer page moves a whole host in one checked write and adds an allocation."""
import pytest
from django.urls import reverse

from allocations.models import Allocation, Consumer
from tests.factories import allocate, allocate_across, make_consumer, make_provider
from tests.ui.conftest import AGG

pytestmark = pytest.mark.django_db


@pytest.fixture
def hosts(db):
    """host-a and host-b (each VCPU on two NUMA nodes, MEMORY_MB on the root), host-c
    (too small), a shared disk; vm holds VCPU 4+2 on host-a's nodes, MEMORY_MB 2048 on
    host-a and DISK_GB 10 on the shared disk."""
    trees = {}
    for name, vcpu in (("host-a", 8), ("host-b", 8), ("host-c", 2)):
        root = make_provider(name, inventory={"MEMORY_MB": 4096}, aggregates=[AGG])
        trees[name] = root
        trees[f"{name}-numa0"] = make_provider(f"{name}-numa0", parent=root,
                                               inventory={"VCPU": vcpu})
        trees[f"{name}-numa1"] = make_provider(f"{name}-numa1", parent=root,
                                               inventory={"VCPU": vcpu})
    disk = make_provider("shared-disk", inventory={"DISK_GB": 1000},
                         traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[AGG])
    vm = make_consumer(project="p", user="u")
    allocate_across(vm, {trees["host-a-numa0"]: {"VCPU": 4}, trees["host-a-numa1"]: {"VCPU": 2},
                         trees["host-a"]: {"MEMORY_MB": 2048}, disk: {"DISK_GB": 10}})
    return {**trees, "disk": disk, "vm": Consumer.objects.get(uuid=vm.uuid)}


def held(consumer):
    return sorted(Allocation.objects.filter(consumer__uuid=consumer.uuid)
                  .values_list("provider__name", "resource_class__name", "used"))


def test_the_picker_shows_where_each_allocation_goes_and_why_a_host_does_not_fit(
        client, hosts, django_assert_max_num_queries):
    vm, a = hosts["vm"], hosts["host-a"]
    page = client.get(reverse("ui:consumer", args=[vm.uuid])).content.decode()
    assert "Move everything on host-a…" in page
    url = reverse("ui:consumer-move-tree-target", args=[vm.uuid]) + f"?root={a.uuid}"
    with django_assert_max_num_queries(14):
        response = client.get(url)
    body = response.content.decode()
    rows = {row["root"].name: row["plan"] for row in response.context["rows"]}
    assert list(rows) == ["host-b", "host-c"]       # host-a itself and the disk are not offered
    assert rows["host-b"].fits
    assert rows["host-b"].allocations() == {
        hosts["host-b-numa0"].uuid: {"VCPU": 6}, hosts["host-b"].uuid: {"MEMORY_MB": 2048}}
    assert not rows["host-c"].fits
    assert "No room: VCPU=4 on host-c-numa" in body
    assert 'aria-label="Move everything to host-b"' in body
    assert 'aria-label="Move everything to host-c"' not in body


def test_a_whole_host_moves_in_one_write_and_the_shared_disk_stays(client, hosts):
    vm, a, b = hosts["vm"], hosts["host-a"], hosts["host-b"]
    url = reverse("ui:consumer-move-tree-target", args=[vm.uuid]) + f"?root={a.uuid}&q=host-b"
    row = client.get(url).context["rows"][0]
    response = client.post(reverse("ui:consumer-move-tree", args=[vm.uuid]), {
        "source_root": a.uuid, "target_root": b.uuid, "consumer_generation": vm.generation,
        "generations": dict(row["move_fields"])["generations"]}, follow=True)
    messages = [str(m) for m in response.context["messages"]]
    assert messages[0].startswith(f"Moved consumer {vm.uuid} from host-a to host-b in one write:")
    assert held(vm) == [("host-b", "MEMORY_MB", 2048), ("host-b-numa0", "VCPU", 6),
                        ("shared-disk", "DISK_GB", 10)]
    assert Consumer.objects.get(uuid=vm.uuid).generation == vm.generation + 1


def test_a_stale_page_moves_nothing(client, hosts):
    vm, a, b = hosts["vm"], hosts["host-a"], hosts["host-b"]
    row = client.get(reverse("ui:consumer-move-tree-target", args=[vm.uuid])
                     + f"?root={a.uuid}&q=host-b").context["rows"][0]
    other = make_consumer(project="p", user="u")
    allocate(other, hosts["host-b-numa0"], VCPU=1)        # host-b changes meanwhile
    before = held(vm)
    response = client.post(reverse("ui:consumer-move-tree", args=[vm.uuid]), {
        "source_root": a.uuid, "target_root": b.uuid, "consumer_generation": vm.generation,
        "generations": dict(row["move_fields"])["generations"]}, follow=True)
    assert "changed by someone else" in str(list(response.context["messages"])[0])
    assert held(vm) == before


def test_a_host_without_room_is_refused_whole(client, hosts):
    vm, a, c = hosts["vm"], hosts["host-a"], hosts["host-c"]
    before = held(vm)
    response = client.post(reverse("ui:consumer-move-tree", args=[vm.uuid]), {
        "source_root": a.uuid, "target_root": c.uuid, "consumer_generation": vm.generation,
        "generations": ""}, follow=True)
    message = str(list(response.context["messages"])[0])
    assert message.startswith("Not moved: The consumer's allocations do not fit on host-c:")
    assert held(vm) == before


def test_add_an_allocation_by_provider_name(client, hosts):
    vm = hosts["vm"]
    response = client.post(reverse("ui:consumer-add", args=[vm.uuid]), {
        "consumer_generation": vm.generation, "provider": "host-b",
        "resource_class": "memory_mb", "amount": "1024"}, follow=True)
    assert (f"Added MEMORY_MB=1,024 on host-b to consumer {vm.uuid}."
            in [str(m) for m in response.context["messages"]])
    assert ("host-b", "MEMORY_MB", 1024) in held(vm)


@pytest.mark.parametrize("data, field, error", [
    ({"provider": "nowhere", "amount": "1"}, "provider", "No resource provider is named"),
    ({"provider": "host-b", "amount": "0"}, "amount", "greater than or equal to 1"),
    ({"provider": "host-b", "amount": "9223372036854775808"}, "amount", "less than or equal"),
])
def test_add_refuses_bad_input_with_a_form_error(client, hosts, data, field, error):
    vm = hosts["vm"]
    before = held(vm)
    response = client.post(reverse("ui:consumer-add", args=[vm.uuid]), {
        "consumer_generation": vm.generation, "resource_class": "VCPU", **data})
    assert response.status_code == 400
    assert error in response.context["add_form"].errors[field][0]
    assert held(vm) == before


def test_add_beyond_capacity_is_refused_with_the_services_message(client, hosts):
    vm = hosts["vm"]
    before = held(vm)
    response = client.post(reverse("ui:consumer-add", args=[vm.uuid]), {
        "consumer_generation": vm.generation, "provider": "host-c",
        "resource_class": "MEMORY_MB", "amount": "5000"}, follow=True)
    assert str(list(response.context["messages"])[0]).startswith("Not added:")
    assert held(vm) == before


def messages_after(response):
    return [str(m) for m in response.context["messages"]]


def picker(client, vm, root):
    return client.get(reverse("ui:consumer-move-tree-target", args=[vm.uuid]), {"root": root},
                      follow=True)


def test_the_picker_takes_the_host_by_name_or_by_any_provider_of_its_tree(client, hosts):
    """The picker said the consumer held nothing "on that host" when the host was named,
    or given by one of its NUMA nodes, though everything was there."""
    vm = hosts["vm"]
    for given in ("host-a", hosts["host-a-numa0"].uuid, " host-a-numa1 "):
        response = picker(client, vm, given)
        assert response.context["source"].name == "host-a", given
        assert [row["root"].name for row in response.context["rows"]] == ["host-b", "host-c"]


def test_the_picker_says_what_is_true_of_a_host_without_the_consumer(client, hosts):
    vm = hosts["vm"]
    elsewhere = picker(client, vm, "host-b")
    assert elsewhere.redirect_chain == [(reverse("ui:consumer", args=[vm.uuid]), 302)]
    assert messages_after(elsewhere) == [
        f"Consumer {vm.uuid} holds nothing in the tree of host-b; it holds allocations in "
        "the trees of host-a, shared-disk."]
    nowhere = picker(client, vm, "nowhere")
    assert messages_after(nowhere) == [
        "Not shown: No resource provider is named or has the uuid “nowhere”."]
    blank = picker(client, vm, "")
    assert messages_after(blank) == ["Not shown: Choose the host to move everything off."]


def post_tree_move(client, vm, source, target):
    return client.post(reverse("ui:consumer-move-tree", args=[vm.uuid]), {
        "source_root": source, "target_root": target, "consumer_generation": vm.generation,
        "generations": ""}, follow=True)


def test_a_move_from_a_provider_below_the_host_moves_the_tree(client, hosts):
    """A source given by one of the host's NUMA nodes was "a resource provider that
    does not exist"; it names the tree, as the picker takes it."""
    vm, b = hosts["vm"], hosts["host-b"]
    response = post_tree_move(client, vm, hosts["host-a-numa0"].uuid, b.uuid)
    assert messages_after(response)[0].startswith(f"Moved consumer {vm.uuid} ")
    assert held(vm) == [("host-b", "MEMORY_MB", 2048), ("host-b-numa0", "VCPU", 6),
                        ("shared-disk", "DISK_GB", 10)]


def test_move_refusals_say_what_is_true(client, hosts):
    vm, a, b, c = hosts["vm"], hosts["host-a"], hosts["host-b"], hosts["host-c"]
    before = held(vm)
    # the consumer holds allocations, only not in host-b's tree (was "No allocations for
    # consumer")
    assert messages_after(post_tree_move(client, vm, b.uuid, c.uuid)) == [
        f"Not moved: Consumer {vm.uuid} holds nothing in the tree of resource provider "
        "host-b."]
    missing = "0b1c2d3e-0000-4000-8000-000000000000"
    assert messages_after(post_tree_move(client, vm, a.uuid, missing)) == [
        f"Not moved: No resource provider is named or has the uuid “{missing}”."]
    assert messages_after(post_tree_move(client, vm, hosts["host-a-numa1"].uuid, a.uuid)) == [
        "Not moved: The allocations are already in the tree of resource provider host-a: "
        "choose another host."]
    assert held(vm) == before


def test_the_allocation_picker_takes_the_provider_by_name_and_says_what_is_held(client, hosts):
    vm = hosts["vm"]
    url = reverse("ui:consumer-move-target", args=[vm.uuid])
    by_name = client.get(url, {"provider": "host-a-numa0", "resource_class": "VCPU"})
    assert by_name.status_code == 200
    assert by_name.context["allocation"].provider.name == "host-a-numa0"
    wrong_class = client.get(url, {"provider": "host-a", "resource_class": "VCPU"}, follow=True)
    assert messages_after(wrong_class) == [
        f"Consumer {vm.uuid} holds no VCPU on host-a, only MEMORY_MB=2,048."]
