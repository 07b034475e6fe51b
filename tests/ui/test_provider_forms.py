"""The provider page's edit forms write through the services, generation-checked."""
import html

import pytest
from django.urls import reverse

from providers.models import Inventory, ResourceProvider

pytestmark = pytest.mark.django_db


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


def post(client, provider, what, data, follow=True):
    url = reverse(f"ui:provider-{what}", args=[provider.uuid])
    return client.post(url, data, follow=follow)


def inventory(provider):
    return {inv.resource_class.name: (inv.total, inv.reserved, inv.max_unit)
            for inv in Inventory.objects.filter(provider=provider).select_related("resource_class")}


def generation(provider):
    return ResourceProvider.objects.get(pk=provider.pk).generation


def test_add_update_delete_one_inventory_class(client, sample):
    cn2 = sample["cn2"]  # at generation 2: its inventory and vm2's allocation
    response = post(client, cn2, "inventory", {
        "resource_class": "DISK_GB", "total": 500, "reserved": 10, "generation": 2,
        "action": "save"})
    assert response.status_code == 200
    assert "Added DISK_GB inventory of cn2." in messages_of(response)
    assert inventory(cn2)["DISK_GB"] == (500, 10, 2147483647)
    assert inventory(cn2)["VCPU"] == (16, 0, 2147483647)  # others untouched
    assert generation(cn2) == 3

    response = post(client, cn2, "inventory", {
        "resource_class": "DISK_GB", "total": 600, "max_unit": 100, "generation": 3,
        "action": "save"})
    assert ("Updated DISK_GB inventory of cn2: total 500 → 600, max_unit 2,147,483,647 → 100."
            in messages_of(response))
    assert inventory(cn2)["DISK_GB"] == (600, 10, 100)   # the blank reserved is kept

    response = post(client, cn2, "inventory", {
        "resource_class": "DISK_GB", "generation": 4, "action": "delete"})
    assert response.status_code == 200
    assert "Delete the DISK_GB inventory of cn2?" in response.content.decode()
    assert "DISK_GB" in inventory(cn2)  # asked, not deleted
    response = post(client, cn2, "inventory", {
        "resource_class": "DISK_GB", "generation": 4, "action": "delete", "confirm": "yes"})
    assert "Deleted DISK_GB inventory of cn2." in messages_of(response)
    assert "DISK_GB" not in inventory(cn2)
    assert generation(cn2) == 5


def test_stale_generation_is_a_conflict_message_and_writes_nothing(client, sample):
    cn2 = sample["cn2"]
    response = post(client, cn2, "inventory", {
        "resource_class": "VCPU", "total": 100, "generation": 7, "action": "save"})
    assert response.status_code == 200
    [message] = messages_of(response)
    assert "changed by someone else" in message
    assert inventory(cn2)["VCPU"] == (16, 0, 2147483647)
    assert generation(cn2) == 2  # as the sample left it


def form_errors(response, name):
    """Every error of the page's form `name` (non-field and field errors), as text."""
    form = response.context[name]
    return [str(e) for errors in form.errors.values() for e in errors]


def test_invalid_inventory_is_a_form_error_with_the_typed_values_kept(client, sample):
    cn2 = sample["cn2"]
    response = post(client, cn2, "inventory", {
        "resource_class": "VCPU", "total": 4, "reserved": 5, "generation": 2,
        "action": "save"}, follow=False)
    assert response.status_code == 400
    form = response.context["inventory_form"]
    # the service refused the record; its message is the form's
    assert any("The reserved value is greater than total" in e
               for e in form.non_field_errors())
    assert "The reserved value is greater than total" in response.content.decode()
    assert (form["total"].value(), form["reserved"].value()) == ("4", "5")
    assert inventory(cn2)["VCPU"] == (16, 0, 2147483647)
    response = post(client, cn2, "inventory", {
        "resource_class": "vcpu", "total": "", "generation": 2, "action": "save"},
        follow=False)
    assert response.status_code == 400
    assert set(response.context["inventory_form"].errors) == {"resource_class", "total"}
    assert generation(cn2) == 2


@pytest.mark.parametrize("field, value", [
    ("total", 0), ("reserved", -1), ("min_unit", 0), ("max_unit", 0), ("step_size", 0),
    ("allocation_ratio", -1), ("total", 2147483648),
])
def test_inventory_field_rules_come_from_the_service(client, sample, field, value):
    cn2 = sample["cn2"]
    data = {"resource_class": "DISK_GB", "total": 100, "generation": 2, "action": "save"}
    data[field] = value
    response = post(client, cn2, "inventory", data, follow=False)
    assert response.status_code == 400
    assert form_errors(response, "inventory_form")
    assert response.context["inventory_form"][field].value() == str(value)
    assert "DISK_GB" not in inventory(cn2)
    assert generation(cn2) == 2


def test_min_unit_above_max_unit_and_ratio_zero_are_stored_as_placement_stores_them(
        client, sample):
    # Placement accepts both (inventories.md): the UI must not be stricter than the API.
    cn2 = sample["cn2"]
    response = post(client, cn2, "inventory", {
        "resource_class": "DISK_GB", "total": 100, "min_unit": 10, "max_unit": 5,
        "allocation_ratio": 0, "generation": 2, "action": "save"}, follow=False)
    assert response.status_code == 302
    assert "DISK_GB" in inventory(cn2)
    assert generation(cn2) == 3


def test_unknown_class_and_in_use_delete_are_form_errors(client, sample):
    cn2 = sample["cn2"]
    response = post(client, cn2, "inventory", {
        "resource_class": "CUSTOM_NOPE", "total": 1, "generation": 2, "action": "save"},
        follow=False)
    assert response.status_code == 400
    [error] = form_errors(response, "inventory_form")
    assert error == ("Unknown resource class in inventory for resource provider cn2: "
                     "No such resource class CUSTOM_NOPE.")
    assert response.context["inventory_form"]["resource_class"].value() == "CUSTOM_NOPE"
    body = response.content.decode()
    assert 'value="CUSTOM_NOPE"' in body and 'name="total" value="1"' in body


@pytest.mark.parametrize("confirmed", [False, True])
def test_refused_delete_keeps_the_generation_and_names_who_holds_the_class(
        client, sample, confirmed):
    cn2, vm2 = sample["cn2"], sample["vm2"]   # vm2 holds VCPU=2 there
    data = {"resource_class": "VCPU", "generation": 2, "action": "delete"}
    if confirmed:
        data["confirm"] = "yes"
    response = post(client, cn2, "inventory", data, follow=False)
    assert response.status_code == 400
    assert "VCPU" in inventory(cn2)
    assert generation(cn2) == 2
    # every form of the page carries the generation the database has, not the one the
    # refused write had counted up to
    body = response.content.decode()
    assert response.context["provider"].generation == 2
    assert 'name="generation" value="3"' not in body
    assert body.count('name="generation" value="2"') >= 3
    # the refusal is at the top, with who holds the class; no form is in error
    refusal = body[body.index('id="refusal"'):]
    refusal = html.unescape(refusal[:refusal.index("</div>")])
    assert body.index('id="refusal"') < body.index('id="inventories"')
    assert "VCPU is in use by 1 consumer" in refusal
    assert f"{vm2.uuid}</a>: VCPU=2" in refusal
    assert "'cn2'" in refusal and cn2.uuid not in refusal
    assert not form_errors(response, "inventory_form")
    assert response.context["inventory_form"]["resource_class"].value() in (None, "")
    # the next write made from that page is not a false conflict
    response = post(client, cn2, "inventory", {
        "resource_class": "VCPU", "total": 20, "generation": 2, "action": "save"})
    assert "Updated VCPU inventory of cn2: total 16 → 20." in messages_of(response)
    assert generation(cn2) == 3


def test_replace_traits(client, sample):
    numa1 = sample["numa1"]  # at generation 1: its inventory
    response = post(client, numa1, "traits", {
        "traits": "HW_CPU_X86_AVX2, HW_NUMA_ROOT\nHW_CPU_X86_AVX2", "generation": 1})
    assert ("Traits of cn1-numa1: added HW_CPU_X86_AVX2, HW_NUMA_ROOT."
            in messages_of(response))
    assert sorted(numa1.traits.values_list("name", flat=True)) == [
        "HW_CPU_X86_AVX2", "HW_NUMA_ROOT"]
    assert generation(numa1) == 2
    response = post(client, numa1, "traits", {"traits": "CUSTOM_GOLD", "generation": 2},
                    follow=False)
    assert response.status_code == 400
    [error] = form_errors(response, "traits_form")
    assert "No such trait CUSTOM_GOLD" in error
    assert response.context["traits_form"]["traits"].value() == "CUSTOM_GOLD"
    assert ">\nCUSTOM_GOLD</textarea>" in response.content.decode()
    # removing traits asks first (issue 52 row 8), before -> after
    asked = post(client, numa1, "traits", {
        "traits": "CUSTOM_GOLD", "create_custom": "on", "generation": 2}, follow=False)
    assert asked.status_code == 200
    assert asked.context["traits_confirm"]["removed"] == ["HW_CPU_X86_AVX2", "HW_NUMA_ROOT"]
    assert asked.context["traits_confirm"]["added"] == ["CUSTOM_GOLD"]
    assert sorted(numa1.traits.values_list("name", flat=True)) == [
        "HW_CPU_X86_AVX2", "HW_NUMA_ROOT"]
    response = post(client, numa1, "traits", {
        "traits": "CUSTOM_GOLD", "create_custom": "on", "generation": 2, "confirm": "yes"})
    assert ("Traits of cn1-numa1: added CUSTOM_GOLD; removed HW_CPU_X86_AVX2, HW_NUMA_ROOT."
            in messages_of(response))
    assert list(numa1.traits.values_list("name", flat=True)) == ["CUSTOM_GOLD"]
    response = post(client, numa1, "traits", {"traits": "", "generation": 2})
    assert "changed by someone else" in messages_of(response)[0]
    assert list(numa1.traits.values_list("name", flat=True)) == ["CUSTOM_GOLD"]


def test_emptying_the_traits_box_asks_first_and_says_what_went(client, sample):
    cn1 = sample["cn1"]
    asked = post(client, cn1, "traits", {"traits": "", "generation": cn1.generation},
                 follow=False)
    assert asked.status_code == 200
    assert "Remove 1 trait" in asked.content.decode()
    assert list(cn1.traits.values_list("name", flat=True)) == ["HW_CPU_X86_AVX2"]
    response = post(client, cn1, "traits", {"traits": "", "generation": cn1.generation,
                                            "confirm": "yes"})
    assert "Traits of cn1: removed HW_CPU_X86_AVX2." in messages_of(response)
    assert not cn1.traits.exists()


def test_failed_trait_write_does_not_leave_created_custom_traits(client, sample):
    from providers.models import Trait

    response = post(client, sample["numa1"], "traits", {
        "traits": "CUSTOM_LEFTOVER", "create_custom": "on", "generation": 5})
    assert "changed by someone else" in messages_of(response)[0]
    assert not Trait.objects.filter(name="CUSTOM_LEFTOVER").exists()


def test_replace_aggregates(client, sample):
    cn2 = sample["cn2"]
    agg = "9a9c6b0f-e8d1-4d16-b053-a2bfe8a76757"
    response = post(client, cn2, "aggregates", {"aggregates": agg, "generation": 2})
    assert "Saved 1 aggregate(s) on cn2." in messages_of(response)
    assert list(cn2.aggregates.values_list("uuid", flat=True)) == [agg]
    response = post(client, cn2, "aggregates", {"aggregates": "not-a-uuid", "generation": 3},
                    follow=False)
    assert response.status_code == 400
    assert "Not a uuid: not-a-uuid" in response.content.decode()
    response = post(client, cn2, "aggregates", {"aggregates": "", "generation": 2})
    assert "changed by someone else" in messages_of(response)[0]
    assert cn2.aggregates.count() == 1


@pytest.mark.parametrize("section", ["inventory", "traits", "aggregates"])
def test_edit_views_write_only_on_post_and_a_get_is_the_provider_page(client, sample, section):
    cn2 = sample["cn2"]
    url = reverse(f"ui:provider-{section}", args=[cn2.uuid])
    response = client.get(url, {"resource_class": "VCPU", "action": "delete", "generation": 2})
    assert response.status_code == 302
    assert response["Location"] == reverse("ui:provider", args=[cn2.uuid])
    assert generation(cn2) == 2 and "VCPU" in inventory(cn2)
    assert client.put(url).status_code == 405


@pytest.mark.parametrize("cut", [{"total": 1}, {"total": 16, "allocation_ratio": 0.1}])
def test_cut_below_usage_is_explained_then_saved_on_confirmation(client, sample, cut):
    cn2, vm2 = sample["cn2"], sample["vm2"]  # vm2 holds VCPU=2 on cn2
    data = {"resource_class": "VCPU", "generation": 2, "action": "save", **cut}
    response = post(client, cn2, "inventory", data)
    assert response.status_code == 200
    body = response.content.decode()
    assert "cn2 becomes over capacity for VCPU" in body
    assert "but 2 is already allocated" in body
    assert f'<span class="mono">{vm2.uuid}</span>: VCPU=2' in body
    assert 'name="confirm" value="yes"' in body
    assert not messages_of(response)
    assert inventory(cn2)["VCPU"] == (16, 0, 2147483647) and generation(cn2) == 2
    response = post(client, cn2, "inventory", {**data, "confirm": "yes"})
    assert any(m.startswith("Updated VCPU inventory of cn2: ")
               for m in messages_of(response))
    assert generation(cn2) == 3
    assert inventory(cn2)["VCPU"][0] == cut["total"]


def test_a_capacity_drop_within_usage_is_confirmed_before_it_is_saved(client, sample):
    cn2 = sample["cn2"]
    data = {"resource_class": "VCPU", "total": 2, "generation": 2, "action": "save"}
    response = post(client, cn2, "inventory", data)
    body = response.content.decode()
    assert "Confirm: less VCPU capacity" in body
    assert "VCPU capacity of cn2 falls from 16 to 2." in body
    assert "becomes over capacity" not in body      # 2 used: still within capacity
    assert inventory(cn2)["VCPU"][0] == 16 and generation(cn2) == 2
    response = post(client, cn2, "inventory", {**data, "confirm": "yes"})
    assert "Updated VCPU inventory of cn2: total 16 → 2." in messages_of(response)
    assert inventory(cn2)["VCPU"][0] == 2


def test_a_capacity_rise_saves_at_once_and_says_before_and_after(client, sample):
    cn2 = sample["cn2"]
    response = post(client, cn2, "inventory", {
        "resource_class": "VCPU", "allocation_ratio": "2", "generation": 2, "action": "save"})
    assert "Updated VCPU inventory of cn2: allocation_ratio 1.0 → 2.0." in messages_of(response)


def test_updating_one_field_keeps_the_others_regression_issue_43(client, sample):
    """Issue 43, item 1: VCPU at reserved 4, max_unit 96, ratio 4.0 (capacity 368); an
    update with only total=96 reset the rest to the defaults (capacity 96) unasked."""
    from tests.factories import make_provider
    host = make_provider("host-43", inventory={"VCPU": {
        "total": 96, "reserved": 4, "max_unit": 96, "allocation_ratio": 4.0}})
    host.refresh_from_db()
    page = client.get(reverse("ui:provider", args=[host.uuid])).content.decode()
    form_html = page[page.index('id="inventory-form"'):]
    form_html = form_html[:form_html.index("</form>")]
    # the blank form carries no default posing as a value
    for name in ("reserved", "max_unit", "min_unit", "step_size", "allocation_ratio"):
        assert f'name="{name}" value=' not in form_html
    data = {"resource_class": "VCPU", "total": 96, "reserved": "", "min_unit": "",
            "max_unit": "", "step_size": "", "allocation_ratio": "",
            "generation": host.generation, "action": "save"}
    response = post(client, host, "inventory", data)
    assert "VCPU inventory of host-43 unchanged." in messages_of(response)
    inv = Inventory.objects.get(provider=host)
    assert (inv.total, inv.reserved, inv.max_unit, inv.allocation_ratio) == (96, 4, 96, 4.0)
    # cutting the ratio alone drops capacity 368 -> 92: shown, asked, then saved
    host.refresh_from_db()
    data.update(allocation_ratio="1", generation=host.generation)
    body = post(client, host, "inventory", data).content.decode()
    assert "VCPU capacity of host-43 falls from 368 to 92." in body
    assert "<td>allocation_ratio</td><td class=\"num\">4.0</td><td class=\"num\">1.0</td>" in body
    assert Inventory.objects.get(provider=host).allocation_ratio == 4.0
    response = post(client, host, "inventory", {**data, "confirm": "yes"})
    assert "Updated VCPU inventory of host-43: allocation_ratio 4.0 → 1.0." in messages_of(response)
    inv = Inventory.objects.get(provider=host)
    assert (inv.total, inv.reserved, inv.max_unit, inv.allocation_ratio) == (96, 4, 96, 1.0)


def test_a_ratio_too_large_for_a_float_is_a_form_error_not_a_blank(client, sample):
    cn2 = sample["cn2"]
    response = post(client, cn2, "inventory", {
        "resource_class": "VCPU", "allocation_ratio": "1e400", "generation": 2,
        "action": "save"}, follow=False)
    assert response.status_code == 400
    assert "Enter a finite number" in response.context["inventory_form"].errors[
        "allocation_ratio"][0]
    assert 'name="allocation_ratio" value="1e400"' in response.content.decode()


def test_after_a_refused_delete_the_add_update_form_still_saves(client, sample):
    cn2 = sample["cn2"]   # VCPU is in use there: its delete is refused
    response = post(client, cn2, "inventory", {
        "resource_class": "VCPU", "generation": 2, "action": "delete", "confirm": "yes"},
        follow=False)
    assert response.status_code == 400
    body = response.content.decode()
    form_html = body[body.index('id="inventory-form"'):]
    assert '<input type="hidden" name="action" value="save">' in form_html
    assert 'name="action" value="delete"' not in form_html.split("</form>")[0]


def test_a_negative_ratio_is_refused_for_what_it_is(client, sample):
    cn2 = sample["cn2"]
    response = post(client, cn2, "inventory", {
        "resource_class": "DISK_GB", "total": 100, "allocation_ratio": -1, "generation": 2,
        "action": "save"}, follow=False)
    assert response.status_code == 400
    assert response.context["inventory_form"].errors["allocation_ratio"] == [
        "The allocation ratio cannot be negative: capacity is (total − reserved) × "
        "allocation ratio."]


def test_an_unknown_custom_class_is_created_when_ticked(client, sample):
    """Issue 52 row 9: the inventory form refused an unknown CUSTOM_ class; like the
    traits form it now offers to create it (in the same transaction as the write)."""
    from providers.models import Inventory, ResourceClass

    cn2 = sample["cn2"]
    data = {"resource_class": "CUSTOM_FPGA", "total": 4, "generation": 2, "action": "save"}
    refused = post(client, cn2, "inventory", data, follow=False)
    assert refused.status_code == 400
    assert not ResourceClass.objects.filter(name="CUSTOM_FPGA").exists()
    post(client, cn2, "inventory", {**data, "create_custom": "on"})
    assert Inventory.objects.get(provider=cn2, resource_class__name="CUSTOM_FPGA").total == 4
    # a write the service refuses leaves no class behind
    post(client, cn2, "inventory", {"resource_class": "CUSTOM_LEFTOVER", "total": 4,
                                    "generation": 1, "action": "save", "create_custom": "on"})
    assert not ResourceClass.objects.filter(name="CUSTOM_LEFTOVER").exists()
