"""One-click revert of a change log entry, checked against the generation it left."""
import pytest
from django.urls import reverse

from allocations.models import Allocation
from providers.models import ChangeRecord, Inventory, ResourceProvider

pytestmark = pytest.mark.django_db


def latest(kind, entity):
    return ChangeRecord.objects.filter(kind=kind, entity=entity).order_by("-id").first()


def revert(client, record, next_url):
    """Revert, confirming where the page asks (a revert that frees allocations)."""
    response = client.post(reverse("ui:change-revert", args=[record.id]),
                           {"next": next_url, "confirm": "yes"}, follow=True)
    return response, [str(m) for m in response.context["messages"]]


def test_an_inventory_change_is_reverted_in_one_click(client, sample):
    cn2 = sample["cn2"]
    page = reverse("ui:provider", args=[cn2.uuid])
    client.post(reverse("ui:provider-inventory", args=[cn2.uuid]), {
        "resource_class": "VCPU", "total": 32, "reserved": 2, "generation": 2,
        "action": "save"})
    entry = latest("provider", cn2.uuid)
    body = client.get(page).content.decode()
    assert f'aria-label="Revert change {entry.id}"' in body
    response, messages = revert(client, entry, page)
    assert response.request["PATH_INFO"] == page
    assert messages[-1].startswith(f"Reverted change {entry.id} (inventories of cn2")
    inv = Inventory.objects.get(provider=cn2, resource_class__name="VCPU")
    assert (inv.total, inv.reserved) == (16, 0)
    assert latest("provider", cn2.uuid).id > entry.id        # the revert is logged too


def test_a_revert_after_a_newer_change_is_refused_and_writes_nothing(client, sample):
    cn2 = sample["cn2"]
    url = reverse("ui:provider-inventory", args=[cn2.uuid])
    client.post(url, {"resource_class": "VCPU", "total": 32, "generation": 2, "action": "save"})
    first = latest("provider", cn2.uuid)
    client.post(url, {"resource_class": "VCPU", "total": 40, "generation": 3, "action": "save"})
    _, messages = revert(client, first, reverse("ui:provider", args=[cn2.uuid]))
    assert messages[-1] == ("Not reverted: Resource provider cn2 changed after this entry "
                            "(generation 3 then, 4 now): revert the newer entries first, "
                            "or edit it.")
    assert Inventory.objects.get(provider=cn2, resource_class__name="VCPU").total == 40
    assert ResourceProvider.objects.get(pk=cn2.pk).generation == 4


def test_a_deleted_inventory_comes_back(client, sample):
    disk = sample["cn1"]
    client.post(reverse("ui:provider-inventory", args=[disk.uuid]), {
        "resource_class": "DISK_GB", "total": 50, "generation": disk.generation,
        "action": "save"})
    disk.refresh_from_db()
    client.post(reverse("ui:provider-inventory", args=[disk.uuid]), {
        "resource_class": "DISK_GB", "generation": disk.generation, "action": "delete",
        "confirm": "yes"})
    assert not Inventory.objects.filter(provider=disk, resource_class__name="DISK_GB").exists()
    revert(client, latest("provider", disk.uuid), "/ui/")
    assert Inventory.objects.get(provider=disk, resource_class__name="DISK_GB").total == 50


def test_a_consumer_move_is_reverted_and_a_stale_revert_refused(client, sample):
    vm2, cn2, cn1 = sample["vm2"], sample["cn2"], sample["cn1"]
    page = reverse("ui:consumer", args=[vm2.uuid])
    client.post(reverse("ui:consumer-move", args=[vm2.uuid]), {
        "source": cn2.uuid, "source_generation": cn2.generation, "resource_class": "MEMORY_MB",
        "consumer_generation": 1, "target": f"{cn1.uuid}:{cn1.generation}",
        "unrelated_ok": "on"})
    assert Allocation.objects.get(consumer__uuid=vm2.uuid,
                                  resource_class__name="MEMORY_MB").provider_id == cn1.id
    entry = latest("consumer", vm2.uuid)
    assert f'aria-label="Revert change {entry.id}"' in client.get(page).content.decode()
    _, messages = revert(client, entry, page)
    assert messages[-1].startswith(f"Reverted change {entry.id}")
    assert Allocation.objects.get(consumer__uuid=vm2.uuid,
                                  resource_class__name="MEMORY_MB").provider_id == cn2.id
    _, messages = revert(client, entry, page)            # again: the consumer moved on
    assert messages[-1].startswith(f"Not reverted: Consumer {vm2.uuid} changed after this entry")


def test_removing_every_allocation_is_reverted(client, sample):
    vm2 = sample["vm2"]
    client.post(reverse("ui:consumer-remove", args=[vm2.uuid]),
                {"consumer_generation": 1, "confirm": "on"})
    assert not Allocation.objects.filter(consumer__uuid=vm2.uuid).exists()
    revert(client, latest("consumer", vm2.uuid), reverse("ui:consumer", args=[vm2.uuid]))
    assert sorted(Allocation.objects.filter(consumer__uuid=vm2.uuid)
                  .values_list("resource_class__name", "used")) == [("MEMORY_MB", 512), ("VCPU", 2)]


def test_next_must_be_this_site(client, sample):
    cn2 = sample["cn2"]
    client.post(reverse("ui:provider-inventory", args=[cn2.uuid]), {
        "resource_class": "VCPU", "total": 32, "generation": 2, "action": "save"})
    response = client.post(reverse("ui:change-revert", args=[latest("provider", cn2.uuid).id]),
                           {"next": "https://evil.example/"})
    assert response["Location"] == reverse("ui:dashboard")


@pytest.mark.parametrize("next_url", ["abc", "ui:providers", "", "javascript:alert(1)"])
def test_a_next_that_is_no_path_goes_to_the_dashboard(client, sample, next_url):
    # a bare word was taken for a view's name by redirect(): a 500
    cn2 = sample["cn2"]
    client.post(reverse("ui:provider-inventory", args=[cn2.uuid]), {
        "resource_class": "VCPU", "total": 32, "generation": 2, "action": "save"})
    for record_id in (latest("provider", cn2.uuid).id, 999999999):
        response = client.post(reverse("ui:change-revert", args=[record_id]),
                               {"next": next_url})
        assert response.status_code == 302
        assert response["Location"] == reverse("ui:dashboard")


def test_an_entry_not_in_the_log_is_said_in_words(client, db):
    # once "Change 999999999 (? ?) cannot be reverted: there is no such entry."
    response = client.post(reverse("ui:change-revert", args=[999999999]),
                           {"next": "/ui/"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "Not reverted: There is no change log entry 999999999: it was pruned, or never "
        "written."]


def test_a_revert_that_frees_allocations_asks_first(client, sample):
    """Issue 52 row 2: "Revert" on a consumer's first entry removed all it holds in one
    click. Now it shows before -> after and writes nothing until confirmed."""
    vm2 = sample["vm2"]
    first = ChangeRecord.objects.filter(kind="consumer", entity=vm2.uuid).order_by("id").first()
    page = reverse("ui:consumer", args=[vm2.uuid])
    url = reverse("ui:change-revert", args=[first.id])
    asked = client.post(url, {"next": page})
    assert asked.status_code == 200
    body = asked.content.decode()
    assert "Revert and free it" in body
    assert "on cn2: 2 → 0 (removed)" in body and "MEMORY_MB" in body
    assert Allocation.objects.filter(consumer__uuid=vm2.uuid).count() == 2
    done = client.post(url, {"next": page, "confirm": "yes"})
    assert done.status_code == 302 and done["Location"] == page
    assert not Allocation.objects.filter(consumer__uuid=vm2.uuid).exists()


def test_an_inventory_revert_that_frees_nothing_does_not_ask(client, sample):
    cn2 = sample["cn2"]
    client.post(reverse("ui:provider-inventory", args=[cn2.uuid]), {
        "resource_class": "VCPU", "total": 32, "generation": 2, "action": "save"})
    response = client.post(reverse("ui:change-revert", args=[latest("provider", cn2.uuid).id]),
                           {"next": "/ui/"})
    assert response.status_code == 302
    assert Inventory.objects.get(provider=cn2, resource_class__name="VCPU").total == 16
