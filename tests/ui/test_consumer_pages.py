"""Consumer pages: the list, one consumer's allocations across providers, moving one
allocation and removing all through the services (generation-checked), and the
change log on consumer and provider pages."""
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from allocations import services
from allocations.models import Allocation, Consumer
from providers.models import ChangeRecord, ResourceProvider
from providers.services import inventories as inventory_services
from tests.factories import make_provider, set_inventory

pytestmark = pytest.mark.django_db


def text(response):
    return response.content.decode()


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


def held(consumer):
    return sorted(Allocation.objects.filter(consumer__uuid=consumer.uuid).values_list(
        "provider__name", "resource_class__name", "used"))


def generation(provider):
    return ResourceProvider.objects.get(pk=provider.pk).generation


def target(provider):
    provider = ResourceProvider.objects.get(pk=provider.pk)
    return f"{provider.uuid}:{provider.generation}"


def move(client, consumer, source, rc, to, consumer_generation=None, source_generation=None,
         **extra):
    data = {"source": source.uuid, "resource_class": rc,
            "source_generation": generation(source) if source_generation is None
            else source_generation,
            "consumer_generation": Consumer.objects.get(pk=consumer.pk).generation
            if consumer_generation is None else consumer_generation,
            "target": to, **extra}
    return client.post(reverse("ui:consumer-move", args=[consumer.uuid]), data, follow=True)


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------

def test_consumer_page_shows_all_allocations_and_who_holds_them(client, sample):
    vm1 = sample["vm1"]
    response = client.get(reverse("ui:consumer", args=[vm1.uuid]))
    assert response.status_code == 200
    rows = [(r["allocation"].provider.name, r["allocation"].resource_class.name,
             r["allocation"].used) for r in response.context["allocations"]]
    assert rows == [("cn1", "MEMORY_MB", 2048), ("cn1-numa0", "VCPU", 6),
                    ("shared-disk", "DISK_GB", 100)]
    body = text(response)
    for value in ("proj-a", "alice", "INSTANCE", vm1.uuid):
        assert value in body
    assert response.context["consumer"].generation == 1
    assert response.context["providers"] == 3


def picker(client, consumer, provider, rc, **params):
    return client.get(reverse("ui:consumer-move-target", args=[consumer.uuid]),
                      {"provider": provider.uuid, "resource_class": rc, **params})


def test_move_picker_offers_the_providers_with_room_related_first(client, sample):
    vm1 = sample["vm1"]
    page = client.get(reverse("ui:consumer", args=[vm1.uuid]))
    assert 'href="/ui/consumers/%s/move-to?provider=%s&amp;resource_class=VCPU"' % (
        vm1.uuid, sample["numa0"].uuid) in text(page)

    response = picker(client, vm1, sample["numa0"], "VCPU")
    targets = [(t.name, t.free, t.capacity, t.related) for t in response.context["page"]]
    # cn1-numa1 is in the tree holding the consumer's memory: first, though cn2 has more room
    assert targets == [("cn1-numa1", 8, 8, True), ("cn2", 14, 16, False)]
    assert response.context["choice"].related_roots == ["cn1", "shared-disk"]
    body = text(response)
    assert f'value="{sample["numa1"].uuid}:1"' in body   # its generation: one inventory write
    assert body.count('name="unrelated_ok" required') == 1   # cn2's row only

    # a page number beyond the last, or not a number, shows the last or the first page
    for asked in ("9", "0", "x"):
        paged = picker(client, vm1, sample["numa0"], "VCPU", page=asked)
        assert paged.context["page"].paginator.count == 2
        assert [t.name for t in paged.context["page"]] == ["cn1-numa1", "cn2"]

    memory = picker(client, vm1, sample["cn1"], "MEMORY_MB")
    assert [t.name for t in memory.context["page"]] == ["cn2"]
    disk = picker(client, vm1, sample["disk"], "DISK_GB")
    assert list(disk.context["page"]) == [] and disk.context["choice"].with_inventory == 0


def test_move_picker_leaves_out_providers_without_room_and_says_why(client, sample):
    vm1 = sample["vm1"]
    make_provider("cn3", inventory={"VCPU": 4})
    make_provider("cn4", inventory={"VCPU": {"total": 64, "max_unit": 4}})
    response = picker(client, vm1, sample["numa0"], "VCPU")
    assert [t.name for t in response.context["page"]] == ["cn1-numa1", "cn2"]
    assert response.context["refused"] == []        # only said for a search
    searched = picker(client, vm1, sample["numa0"], "VCPU", q="CN")
    assert [t.name for t in searched.context["page"]] == ["cn1-numa1", "cn2"]
    why = {t.name: t.refusal[1] for t in searched.context["refused"]}
    assert why == {"cn3": "needs 6, free 4 (capacity 4, used 0)",
                   "cn4": "6 breaks min_unit 1, max_unit 4, step_size 1"}
    body = text(searched)
    assert "VCPU: needs 6, free 4 (capacity 4, used 0)" in body
    assert "/ui/candidates/why-not/?q=resources%3DVCPU%3A6&amp;version=1.39&amp;tree=cn3" in body
    nothing = picker(client, vm1, sample["numa0"], "VCPU", q="nowhere")
    assert "No provider with VCPU inventory has a name containing" in text(nothing)


def test_move_picker_for_an_allocation_no_longer_held(client, sample):
    response = picker(client, sample["vm1"], sample["cn2"], "VCPU", follow=True)
    response = client.get(response["Location"])
    assert messages_of(response) == [
        f"Consumer {sample['vm1'].uuid} holds no VCPU on cn2 (any more)."]
    assert client.get(reverse("ui:consumer-move-target", args=[sample["vm1"].uuid])
                      ).status_code == 404


def test_move_into_an_unrelated_tree_needs_a_confirmation(client, sample):
    vm1, disk, cn2 = sample["vm1"], sample["disk"], sample["cn2"]
    set_inventory(cn2, {"VCPU": 16, "MEMORY_MB": 8192, "DISK_GB": 500})
    response = move(client, vm1, disk, "DISK_GB", target(cn2))
    assert messages_of(response) == [
        f"Not moved: cn2 is in a tree where consumer {vm1.uuid} holds nothing else; tick "
        '"move to another tree" to move it there anyway.']
    assert response.context["allocation"].provider.name == "shared-disk"   # the picker
    assert held(vm1)[2] == ("shared-disk", "DISK_GB", 100)
    response = move(client, vm1, disk, "DISK_GB", target(cn2), unrelated_ok="on")
    assert held(vm1)[0] == ("cn1", "MEMORY_MB", 2048) and ("cn2", "DISK_GB", 100) in held(vm1)


def test_remove_one_allocation_asks_first_then_removes_it_alone(client, sample):
    vm1, disk = sample["vm1"], sample["disk"]
    data = {"provider": disk.uuid, "provider_generation": generation(disk),
            "resource_class": "DISK_GB", "consumer_generation": 1}
    url = reverse("ui:consumer-remove-one", args=[vm1.uuid])
    asked = client.post(url, data)
    assert "Remove DISK_GB=100 from shared-disk?" in text(asked)
    assert len(held(vm1)) == 3
    done = client.post(url, {**data, "confirm": "on"}, follow=True)
    assert messages_of(done) == [f"Removed DISK_GB=100 of consumer {vm1.uuid} from shared-disk."]
    assert held(vm1) == [("cn1", "MEMORY_MB", 2048), ("cn1-numa0", "VCPU", 6)]
    stale = client.post(url, {**data, "resource_class": "VCPU", "provider": sample["numa0"].uuid,
                              "provider_generation": generation(sample["numa0"]),
                              "confirm": "on"}, follow=True)
    assert messages_of(stale)[0].startswith(f"Not removed: consumer {vm1.uuid} or one of its "
                                            "providers was changed by someone else")


def test_remove_the_last_allocation_removes_the_consumer(client, sample):
    vm2, cn2 = sample["vm2"], sample["cn2"]
    url = reverse("ui:consumer-remove-one", args=[vm2.uuid])
    for rc in ("VCPU", "MEMORY_MB"):
        response = client.post(url, {
            "provider": cn2.uuid, "provider_generation": generation(cn2), "resource_class": rc,
            "consumer_generation": Consumer.objects.get(uuid=vm2.uuid).generation,
            "confirm": "on"}, follow=True)
    assert messages_of(response) == [
        f"Removed MEMORY_MB=512 of consumer {vm2.uuid} from cn2. That was its last "
        "allocation: the consumer no longer exists."]
    assert not Consumer.objects.filter(uuid=vm2.uuid).exists()


def test_consumer_reachable_from_provider_page_and_usages(client, sample):
    vm1 = sample["vm1"]
    page = text(client.get(reverse("ui:provider", args=[sample["numa0"].uuid])))
    assert reverse("ui:consumer", args=[vm1.uuid]) in page

    usages = client.get(reverse("ui:usages"))
    row = next(r for r in usages.context["table"] if r["cells"][0] == "proj-a")
    link = f'{reverse("ui:consumers")}?{row["consumers_query"]}'
    assert link.replace("&", "&amp;") in text(usages)
    listing = client.get(link)
    assert listing.status_code == 200
    assert [r["consumer"].uuid for r in listing.context["rows"]] == [vm1.uuid]
    assert reverse("ui:consumer", args=[vm1.uuid]) in text(listing)
    assert "VCPU=6 on cn1-numa0" in text(listing)


def test_consumers_list_filters(client, sample):
    listing = client.get(reverse("ui:consumers"))
    assert len(listing.context["rows"]) == 2
    untyped = client.get(reverse("ui:consumers"), {"consumer_type": "unknown"})
    assert [r["consumer"].uuid for r in untyped.context["rows"]] == [sample["vm2"].uuid]
    by_uuid = client.get(reverse("ui:consumers"), {"q": sample["vm1"].uuid[:8]})
    assert [r["consumer"].uuid for r in by_uuid.context["rows"]] == [sample["vm1"].uuid]
    bad = client.get(reverse("ui:consumers"), {"project": "x" * 300})
    assert bad.status_code == 200 and bad.context["rows"] == []


def test_unknown_consumer_is_404(client, sample):
    assert client.get(reverse("ui:consumer", args=["nope"])).status_code == 404


# --------------------------------------------------------------------------
# Moving one allocation
# --------------------------------------------------------------------------

def test_move_one_allocation(client, sample):
    vm1, numa0, numa1 = sample["vm1"], sample["numa0"], sample["numa1"]
    response = move(client, vm1, numa0, "VCPU", target(numa1))
    assert response.status_code == 200
    assert messages_of(response) == [
        f"Moved VCPU=6 of consumer {vm1.uuid} from cn1-numa0 to cn1-numa1."]
    assert held(vm1) == [("cn1", "MEMORY_MB", 2048), ("cn1-numa1", "VCPU", 6),
                         ("shared-disk", "DISK_GB", 100)]
    consumer = Consumer.objects.get(pk=vm1.pk)
    assert consumer.generation == 2
    assert (consumer.project.external_id, consumer.user.external_id,
            consumer.consumer_type.name) == ("proj-a", "alice", "INSTANCE")
    # the consumer page's change log shows the move, by the UI login
    rows = response.context["log"]["rows"]
    assert rows[0]["entry"].actor == "ui:operator"
    lines = " ".join(str(line) for line in rows[0]["lines"])
    assert "generation 1 → 2" in lines
    assert "cn1-numa0</a>: VCPU=6 → nothing" in lines
    assert "cn1-numa1</a>: nothing → VCPU=6" in lines
    # ... and so do both providers' pages
    for provider, change in ((numa0, "VCPU=6 → nothing"), (numa1, "nothing → VCPU=6")):
        page = client.get(reverse("ui:provider", args=[provider.uuid]))
        lines = " ".join(str(line) for line in page.context["log"]["rows"][0]["lines"])
        assert f"{vm1.uuid}</a>: {change}" in lines
        assert page.context["log"]["rows"][0]["entry"].actor == "ui:operator"


def test_move_adds_to_what_the_consumer_holds_on_the_target(client, sample):
    vm2, cn2 = sample["vm2"], sample["cn2"]
    numa1 = sample["numa1"]
    services.allocations_replace(consumers=[services.ConsumerAllocations(
        vm2.uuid, "proj-b", "bob", {cn2.uuid: {"VCPU": 2, "MEMORY_MB": 512},
                                    numa1.uuid: {"VCPU": 1}}, generation=1)])
    response = move(client, vm2, numa1, "VCPU", target(cn2))
    assert "Moved VCPU=1" in messages_of(response)[0]
    assert held(vm2) == [("cn2", "MEMORY_MB", 512), ("cn2", "VCPU", 3)]


def test_move_with_a_stale_consumer_generation_is_a_conflict(client, sample):
    vm1, numa0, numa1 = sample["vm1"], sample["numa0"], sample["numa1"]
    page_generation = 1
    services.allocations_replace(consumers=[services.ConsumerAllocations(
        vm1.uuid, "proj-a", "alice", {numa0.uuid: {"VCPU": 4}}, generation=1)])
    response = move(client, vm1, numa0, "VCPU", target(numa1),
                    consumer_generation=page_generation)
    assert response.status_code == 200
    (message,) = messages_of(response)
    assert message.startswith(f"Not moved: consumer {vm1.uuid} or one of its providers was "
                              "changed by someone else since this page was loaded")
    assert "consumer generation conflict" in message
    assert held(vm1) == [("cn1-numa0", "VCPU", 4)]


def test_move_with_a_stale_provider_generation_is_a_conflict(client, sample):
    vm1, numa0, numa1 = sample["vm1"], sample["numa0"], sample["numa1"]
    stale_target = target(numa1)
    inventory_services.inventories_replace(  # someone edits the target meanwhile
        provider=ResourceProvider.objects.get(pk=numa1.pk), generation=1,
        inventories={"VCPU": {"total": 4}})
    response = move(client, vm1, numa0, "VCPU", stale_target)
    (message,) = messages_of(response)
    assert "Not moved" in message and "since this page was loaded" in message
    assert "resource provider cn1-numa1 generation conflict - expected 1" in message
    assert ("cn1-numa0", "VCPU", 6) in held(vm1)

    # the source's generation is checked too, though the move does not bump it
    response = move(client, vm1, numa0, "VCPU", target(numa1),
                    source_generation=generation(numa0) + 1)
    assert "resource provider cn1-numa0 generation conflict" in messages_of(response)[0]


def test_move_to_a_provider_without_the_class_is_refused_by_name(client, sample):
    vm1, numa0, disk = sample["vm1"], sample["numa0"], sample["disk"]
    response = move(client, vm1, numa0, "VCPU", target(disk))
    assert response.status_code == 200
    (message,) = messages_of(response)
    assert message == ("Not moved: Unable to allocate inventory: Inventory for 'VCPU' on "
                       "resource provider 'shared-disk' invalid.")
    assert ("cn1-numa0", "VCPU", 6) in held(vm1)


def test_move_over_capacity_is_refused_by_name(client, sample):
    vm1, cn1, cn2 = sample["vm1"], sample["cn1"], sample["cn2"]
    inventory_services.inventories_replace(
        provider=ResourceProvider.objects.get(pk=cn2.pk), generation=2,
        inventories={"VCPU": {"total": 16}, "MEMORY_MB": {"total": 1024}})
    response = move(client, vm1, cn1, "MEMORY_MB", target(cn2), unrelated_ok="on")
    (message,) = messages_of(response)
    assert message.startswith("Not moved: Unable to allocate inventory: Unable to create "
                              "allocation for 'MEMORY_MB' on resource provider 'cn2'.")


def test_move_refusals_for_odd_posts_are_messages_not_errors(client, sample):
    vm1, numa0 = sample["vm1"], sample["numa0"]
    same = move(client, vm1, numa0, "VCPU", target(numa0))
    assert "already on resource provider cn1-numa0" in messages_of(same)[0]
    not_held = move(client, vm1, numa0, "DISK_GB", target(sample["disk"]))
    assert f"Consumer {vm1.uuid} holds no DISK_GB on resource provider cn1-numa0" in \
        messages_of(not_held)[0]
    missing = move(client, vm1, numa0, "VCPU", "0b1c2d3e-0000-4000-8000-000000000000:0")
    assert "does not exist" in messages_of(missing)[0]
    never = "1b2c3d4e-0000-4000-8000-000000000000"
    gone = move(client, Consumer(uuid=never, pk=vm1.pk), numa0, "VCPU", target(sample["numa1"]))
    # no page for a consumer that never existed: back to the list, with the reason
    assert gone.redirect_chain == [(reverse("ui:consumers"), 302)]
    assert messages_of(gone) == [f"Not moved: No allocations for consumer '{never}'"]
    assert held(vm1)[1] == ("cn1-numa0", "VCPU", 6)


def test_malformed_move_shows_the_form_errors(client, sample):
    url = reverse("ui:consumer-move", args=[sample["vm1"].uuid])
    response = client.post(url, {"source": sample["numa0"].uuid, "resource_class": "VCPU",
                                 "source_generation": "x", "consumer_generation": 1,
                                 "target": ""})
    assert response.status_code == 400
    assert "Choose the provider to move the allocation to." in text(response)
    response = client.post(url, {"source": sample["numa0"].uuid, "resource_class": "VCPU",
                                 "source_generation": 0, "consumer_generation": 1,
                                 "target": "garbage"})
    assert response.status_code == 400
    assert client.get(url).status_code == 405


# --------------------------------------------------------------------------
# Removing every allocation
# --------------------------------------------------------------------------

def test_remove_asks_first_then_removes(client, sample):
    vm2 = sample["vm2"]
    url = reverse("ui:consumer-remove", args=[vm2.uuid])
    confirm = client.post(url, {"consumer_generation": 1})
    assert confirm.status_code == 200
    assert confirm.context["confirm_remove"] == 1
    assert "Remove all 2 allocations of this consumer on 1 provider?" in text(confirm)
    assert held(vm2)

    response = client.post(url, {"consumer_generation": 1, "confirm": "on"}, follow=True)
    assert response.status_code == 200
    assert messages_of(response) == [
        f"Removed every allocation of consumer {vm2.uuid}; the consumer no longer exists."]
    assert not Consumer.objects.filter(uuid=vm2.uuid).exists()
    # the page of the deleted consumer still shows its history
    assert response.context["consumer"] is None
    assert "holds no allocations now" in text(response)
    first = response.context["log"]["rows"][0]
    assert first["entry"].action == "allocations" and first["entry"].after is None
    assert "all allocations removed, consumer deleted" in str(first["lines"][0])


def test_remove_with_a_stale_generation_is_a_conflict(client, sample):
    vm2, cn2 = sample["vm2"], sample["cn2"]
    services.allocations_replace(consumers=[services.ConsumerAllocations(
        vm2.uuid, "proj-b", "bob", {cn2.uuid: {"VCPU": 1}}, generation=1)])
    response = client.post(reverse("ui:consumer-remove", args=[vm2.uuid]),
                           {"consumer_generation": 1, "confirm": "on"}, follow=True)
    (message,) = messages_of(response)
    assert "Not removed" in message and "since this page was loaded" in message
    assert held(vm2) == [("cn2", "VCPU", 1)]


def test_remove_of_a_gone_consumer_is_a_message(client, sample):
    vm2 = sample["vm2"]
    services.allocations_delete(consumer_uuid=vm2.uuid)
    response = client.post(reverse("ui:consumer-remove", args=[vm2.uuid]),
                           {"consumer_generation": 1, "confirm": "on"}, follow=True)
    assert response.status_code == 200
    assert messages_of(response) == [f"Not removed: No allocations for consumer '{vm2.uuid}'"]


# --------------------------------------------------------------------------
# The change log section: filters and pages
# --------------------------------------------------------------------------

def _log(entity, count, **fields):
    now = timezone.now()
    ChangeRecord.objects.bulk_create([
        ChangeRecord(kind="provider", entity=entity, created_at=now - timedelta(hours=i),
                     **{"action": "traits", "actor": "nova", "project_id": "service",
                        "before": {"generation": i, "traits": []},
                        "after": {"generation": i + 1, "traits": [f"CUSTOM_T{i}"]},
                        **fields})
        for i in range(count)])


def test_provider_change_log_filters_and_pages(client, sample):
    cn2 = sample["cn2"]
    ChangeRecord.objects.all().delete()  # the sample's own entries (its service writes)
    _log(cn2.uuid, 25)
    _log(cn2.uuid, 2, action="aggregates", actor="ui:operator", project_id="",
         before={"generation": 0, "aggregates": []}, after={"generation": 1, "aggregates": []})
    url = reverse("ui:provider", args=[cn2.uuid])

    page = client.get(url)
    log = page.context["log"]
    assert log["page"].paginator.count == 27 and len(log["rows"]) == 20
    assert [c for c, _ in log["form"].fields["action"].choices] == ["", "aggregates", "traits"]
    assert "log-page=2#change-log" in text(page)
    second = client.get(url, {"log-page": 2})
    assert len(second.context["log"]["rows"]) == 7

    by_action = client.get(url, {"log-action": "aggregates"}).context["log"]
    assert by_action["page"].paginator.count == 2 and by_action["filtered"]
    by_actor = client.get(url, {"log-actor": "SERVICE"}).context["log"]  # the project, any case
    assert by_actor["page"].paginator.count == 25
    assert client.get(url, {"log-actor": "ui:"}).context["log"]["page"].paginator.count == 2
    since = (timezone.now() - timedelta(hours=2, minutes=30)).strftime("%Y-%m-%dT%H:%M")
    recent = client.get(url, {"log-since": since}).context["log"]
    assert recent["page"].paginator.count == 2 * 2 + 1  # hours 0, 1, 2 of the 25; 0, 1 of the 2
    until = client.get(url, {"log-until": since, "log-action": "traits"}).context["log"]
    assert until["page"].paginator.count == 22
    filtered_page = text(client.get(url, {"log-action": "traits", "log-page": 1}))
    assert "log-action=traits&amp;log-page=2#change-log" in filtered_page


def test_change_log_lines_are_readable(client, sample):
    cn2 = sample["cn2"]
    _log(cn2.uuid, 1)
    row = client.get(reverse("ui:provider", args=[cn2.uuid])).context["log"]["rows"][0]
    assert [str(line) for line in row["lines"]] == ["generation 0 → 1", "+ CUSTOM_T0"]
    cn3 = make_provider("cn3", inventory={"VCPU": 16, "MEMORY_MB": 8192})
    inventory_services.inventories_replace(
        provider=cn3, generation=1,
        inventories={"VCPU": {"total": 32}, "DISK_GB": {"total": 10}})
    page = client.get(reverse("ui:provider", args=[cn3.uuid]))
    lines = [str(line) for line in page.context["log"]["rows"][0]["lines"]]
    assert lines == ["generation 1 → 2", "+ <b>DISK_GB</b>: total 10, reserved 0, min_unit 1, "
                     "max_unit 2147483647, step_size 1, allocation_ratio 1.0",
                     "− <b>MEMORY_MB</b> (was total 8192, reserved 0, min_unit 1, "
                     "max_unit 2147483647, step_size 1, allocation_ratio 1.0)",
                     "<b>VCPU</b>: total 16 → 32"]


def test_change_log_bad_filters_show_errors_not_everything(client, sample):
    cn2 = sample["cn2"]
    _log(cn2.uuid, 3)
    url = reverse("ui:provider", args=[cn2.uuid])
    response = client.get(url, {"log-since": "yesterday"})
    assert response.status_code == 200
    assert response.context["log"]["rows"] == []
    assert "Enter a valid date/time." in text(response)
    response = client.get(url, {"log-since": "2030-01-02T00:00", "log-until": "2030-01-01T00:00"})
    assert "Until must be later than From." in text(response)
    response = client.get(url, {"log-action": "no-such-action"})
    assert response.status_code == 200 and response.context["log"]["rows"] == []
    assert client.get(url, {"log-page": "999"}).status_code == 200


def test_consumer_page_has_a_constant_number_of_queries(client, sample, django_assert_max_num_queries):
    numa1 = sample["numa1"]
    extra = make_provider("cn3", inventory={"VCPU": 4})
    for provider in (numa1, extra):
        consumer_uuid = f"{provider.pk:08d}-0000-4000-8000-000000000000"
        services.allocations_replace(consumers=[services.ConsumerAllocations(
            consumer_uuid, "p", "u", {provider.uuid: {"VCPU": 1}}, generation=None)])
    url = reverse("ui:consumer", args=[sample["vm1"].uuid])
    client.get(url)
    with django_assert_max_num_queries(16) as captured:
        assert client.get(url).status_code == 200
    assert not [q for q in captured.captured_queries
                if re.search(r"FROM \"resource_providers\" WHERE .*\"id\" = ", q["sql"])]


def test_describe_creates_updates_deletes_and_allocations(sample):
    from console.providers.change_log import describe

    cn1, cn2 = sample["cn1"], sample["cn2"]
    gone = "0b1c2d3e-0000-4000-8000-000000000000"
    names = {cn1.uuid: "cn1", cn2.uuid: "cn2"}

    def lines(kind, before, after):
        record = ChangeRecord(kind=kind, entity="x", action="a", before=before, after=after)
        return [str(line) for line in describe(record, names)]

    assert lines("provider", None, {"name": "cn9", "parent": cn1.uuid, "generation": 0}) == [
        "created", "generation 0",
        f'name cn9 · parent <a href="/ui/providers/{cn1.uuid}/">cn1</a>']
    assert lines("provider", {"name": "a", "parent": None}, {"name": "b", "parent": gone}) == [
        "name a → b",
        f'parent none → <span class="mono">{gone}</span> <span class="muted">(deleted)</span>']
    assert lines("provider", {"name": "a", "parent": None, "generation": 3}, None) == [
        "deleted", "generation 3", "name a · parent none"]
    assert lines("consumer", {"generation": 2, "allocations": {cn2.uuid: {"VCPU": 2}}},
                 None) == ["all allocations removed, consumer deleted", "generation 2",
                           f'on <a href="/ui/providers/{cn2.uuid}/">cn2</a>: VCPU=2 → nothing']
    assert lines("consumer", {"generation": 1}, {
        "generation": 2, "project": "p", "user": "u",
        "allocations": {cn2.uuid: {"VCPU": 1, "MEMORY_MB": 64}}}) == [
        "generation 1 → 2", "project p · user u",
        f'on <a href="/ui/providers/{cn2.uuid}/">cn2</a>: now MEMORY_MB=64, VCPU=1']
    assert lines("database", None, {"source": "mysql", "rows": {"a": 2, "b": 3}}) == [
        "created", "source mysql", "5 rows imported"]
