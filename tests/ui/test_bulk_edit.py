"""Bulk edit of allocation ratios and reserved amounts: list, preview (nothing written),
apply with each preview row's generation, a concurrently changed provider reported
as a conflict while the others are applied."""
import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from providers.models import Inventory, ResourceProvider
from providers.services import inventories as inventory_services
from providers.services.inventory_bulk import APPLIED, CONFLICT, REFUSED, inventories_bulk_update
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db


def text(response):
    return response.content.decode()


def shown(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


def vcpu(provider):
    inv = Inventory.objects.get(provider=provider, resource_class__name="VCPU")
    return {f: getattr(inv, f) for f in ("total", "reserved", "min_unit", "max_unit",
                                         "step_size", "allocation_ratio")}


def generation(provider):
    return ResourceProvider.objects.get(pk=provider.pk).generation


def preview(client, providers, **change):
    data = {"resource_class": "VCPU", "name": "", "provider": [p.uuid for p in providers],
            **{k: v for k, v in change.items()}}
    return client.post(reverse("ui:bulk-preview"), data)


def apply_form(response, **extra):
    """The fields the preview page's apply form posts."""
    form = response.context["form"].cleaned_data
    data = {"resource_class": form["resource_class"], "name": form["name"],
            "target": [row.target for row in response.context["applicable"]],
            "over": [row.target for row in response.context["going_over"]], **extra}
    data.update(response.context["changes"])
    return data


# --- step 1: the list ------------------------------------------------------------------------

def test_list_filters_by_class_and_name(client, sample):
    response = client.get(reverse("ui:bulk"), {"resource_class": "VCPU"})
    assert response.status_code == 200
    assert [r.provider_name for r in response.context["rows"]] == ["cn1-numa0", "cn1-numa1", "cn2"]
    assert response.context["ticked"] == set()   # nothing ticked at first (issue 43)
    assert text(response).count('name="provider"') == 3
    assert all('name="provider"' not in line or "checked" not in line
               for line in text(response).splitlines())

    numa = client.get(reverse("ui:bulk"), {"resource_class": "VCPU", "name": "NUMA"})
    assert [r.provider_name for r in numa.context["rows"]] == ["cn1-numa0", "cn1-numa1"]
    memory = client.get(reverse("ui:bulk"), {"resource_class": "MEMORY_MB"})
    assert [(r.provider_name, r.reserved, r.usable, r.used) for r in memory.context["rows"]] == [
        ("cn1", 96, 4000, 2048), ("cn2", 0, 8192, 512)]


def test_list_without_or_with_unknown_class(client, sample):
    assert not client.get(reverse("ui:bulk")).context["rows"]
    response = client.get(reverse("ui:bulk"), {"resource_class": "NOPE"})
    assert not response.context["rows"]
    assert "No such resource class NOPE." in text(response)
    none = client.get(reverse("ui:bulk"), {"resource_class": "VCPU", "name": "zzz"})
    assert "No provider matching these filters has VCPU inventory." in text(none)


# --- step 2: the preview ------------------------------------------------------------------------

def test_preview_ratio_before_after_and_who_goes_over(client, sample):
    numa0, numa1, cn2 = sample["numa0"], sample["numa1"], sample["cn2"]
    before = {p.pk: (vcpu(p), generation(p)) for p in (numa0, numa1, cn2)}
    response = preview(client, [numa0, numa1, cn2], allocation_ratio="0.5")
    assert response.status_code == 200
    rows = {row.before.provider_name: row for row in response.context["rows"]}
    assert {name: (row.before.usable, row.after.usable, row.after.allocation_ratio)
            for name, row in rows.items()} == {
        "cn1-numa0": (8, 4, 0.5), "cn1-numa1": (8, 4, 0.5), "cn2": (16, 8, 0.5)}
    # numa0 holds 6 VCPU: over the new capacity 4, and who holds it is named
    assert [name for name, row in rows.items() if row.goes_over] == ["cn1-numa0"]
    assert rows["cn1-numa0"].holders == [(sample["vm1"].uuid, 6)]
    assert [row.target for row in response.context["applicable"]] == [
        f"{p.uuid}:{p.generation}" for p in (numa0, numa1, cn2)]
    body = text(response)
    assert "goes over capacity" in body and sample["vm1"].uuid in body
    assert "8 → <strong>4</strong>" in body
    # one goes over: applying to all needs an explicit acceptance, or leave it out
    assert "Apply to all 3" in body and "I accept that 1 provider go over capacity" in body
    assert "Apply only where it stays within capacity (leaves out 1)" in body
    # nothing written
    assert {p.pk: (vcpu(p), generation(p)) for p in (numa0, numa1, cn2)} == before


def test_preview_shows_the_services_refusals(client, sample):
    numa0, cn2 = sample["numa0"], sample["cn2"]
    response = preview(client, [numa0, cn2], reserved="10")
    rows = {row.before.provider_name: row for row in response.context["rows"]}
    # numa0 has 8 VCPU: reserved 10 leaves a negative capacity, refused as the API does
    assert rows["cn1-numa0"].problem == (
        f"Invalid inventory for 'VCPU' on resource provider '{numa0.uuid}'. "
        "The reserved value is greater than total.")
    assert rows["cn2"].problem is None
    assert (rows["cn2"].after.reserved, rows["cn2"].after.usable) == (10, 6)
    assert [row.before.provider_name for row in response.context["applicable"]] == ["cn2"]
    assert "Apply to 1 provider<" in text(response)

    negative = preview(client, [cn2], reserved="-1")
    assert negative.context["rows"][0].problem.endswith(
        "reserved must be an integer from 0 to 2147483647; got -1.")
    assert "Apply to" not in text(negative)


def test_preview_needs_a_change_and_a_provider(client, sample):
    response = preview(client, [sample["cn2"]])
    assert response.status_code == 400  # the form again, with its errors
    assert "Give a new allocation ratio, a new reserved amount or both." in text(response)
    assert [r.provider_name for r in response.context["rows"]] == ["cn1-numa0", "cn1-numa1", "cn2"]
    assert response.context["ticked"] == {sample["cn2"].uuid}

    nothing = preview(client, [], allocation_ratio="2")
    assert nothing.status_code == 400  # the form again, with its errors
    assert "Tick at least one provider, or choose every matching provider." in text(nothing)
    not_a_number = preview(client, [sample["cn2"]], allocation_ratio="lots")
    assert "Enter a number." in text(not_a_number)


# --- step 3: apply ---------------------------------------------------------------------------------

def test_apply_writes_each_provider_with_its_preview_generation(client, sample):
    numa1, cn2 = sample["numa1"], sample["cn2"]
    shown_before = preview(client, [numa1, cn2], allocation_ratio="4", reserved="1")
    gens = {p.pk: generation(p) for p in (numa1, cn2)}
    response = client.post(reverse("ui:bulk-apply"), apply_form(shown_before))
    assert response.status_code == 302
    batch = response["X-Openstack-Request-Id"]
    assert response["Location"] == reverse("ui:bulk-batch", args=[batch])
    assert shown(response) == [
        f"Batch {batch}: set VCPU allocation_ratio 4.0, reserved 1 on 2 provider(s): "
        "cn1-numa1, cn2."]
    assert vcpu(numa1) == {"total": 8, "reserved": 1, "min_unit": 1, "max_unit": 2147483647,
                           "step_size": 1, "allocation_ratio": 4.0}
    assert (vcpu(cn2)["reserved"], vcpu(cn2)["allocation_ratio"]) == (1, 4.0)
    assert {p.pk: generation(p) for p in (numa1, cn2)} == {pk: g + 1 for pk, g in gens.items()}
    # untouched: not ticked
    assert vcpu(sample["numa0"])["allocation_ratio"] == 1.0


def test_apply_reports_a_concurrent_change_as_conflict_and_applies_the_others(client, sample):
    numa0, numa1, cn2 = sample["numa0"], sample["numa1"], sample["cn2"]
    shown_before = preview(client, [numa0, numa1, cn2], allocation_ratio="2")
    # someone else changes cn2 after the preview was computed
    inventory_services.inventory_set(
        provider=ResourceProvider.objects.get(pk=cn2.pk), resource_class="VCPU",
        generation=generation(cn2), record={"total": 32})
    response = client.post(reverse("ui:bulk-apply"), apply_form(shown_before), follow=True)
    assert response.status_code == 200
    messages = [str(m) for m in response.context["messages"]]
    batch = response.context["request_id"]
    assert messages == [
        f"Batch {batch}: set VCPU allocation_ratio 2.0 on 2 provider(s): cn1-numa0, "
        "cn1-numa1.",
        "Conflict: cn2 was changed by someone else since the preview (resource provider "
        "generation conflict); not applied. Preview again to apply to it."]
    assert vcpu(numa0)["allocation_ratio"] == vcpu(numa1)["allocation_ratio"] == 2.0
    assert (vcpu(cn2)["total"], vcpu(cn2)["allocation_ratio"]) == (32, 1.0)
    # the batch's page: its two entries
    assert [row["name"] for row in response.context["rows"]] == ["cn1-numa0", "cn1-numa1"]
    assert '<li class="error">Conflict: cn2' in text(response)


def test_apply_with_a_bad_form_writes_nothing(client, sample):
    response = client.post(reverse("ui:bulk-apply"), {
        "resource_class": "VCPU", "allocation_ratio": "2", "target": ["garbage"]})
    assert response.status_code == 302
    assert shown(response) == ["Nothing applied: Not a provider and generation: garbage"]
    assert vcpu(sample["cn2"])["allocation_ratio"] == 1.0


def test_service_outcomes(sample):
    numa0, cn1 = sample["numa0"], sample["cn1"]
    outcomes = inventories_bulk_update(resource_class="VCPU", changes={"reserved": 9}, targets=[
        (numa0.uuid, numa0.generation),           # 9 > total 8: refused
        (cn1.uuid, cn1.generation),               # no VCPU inventory
        (cn1.uuid, cn1.generation + 5),           # ... and a stale generation first
        ("00000000-0000-0000-0000-000000000000", 0),
        (sample["cn2"].uuid, sample["cn2"].generation)])
    assert [(o.provider_name, o.status) for o in outcomes] == [
        ("cn1-numa0", REFUSED), ("cn1", REFUSED), ("cn1", CONFLICT),
        ("00000000-0000-0000-0000-000000000000", REFUSED), ("cn2", APPLIED)]
    assert outcomes[0].message == (
        f"Unable to update inventory for resource provider {numa0.uuid}: Invalid inventory "
        f"for 'VCPU' on resource provider '{numa0.uuid}'. The reserved value is greater "
        "than total.")
    assert outcomes[1].message == (f"No inventory record with resource class for resource "
                                   f"provider {cn1.uuid}: No inventory of class VCPU found.")
    assert outcomes[4].generation == sample["cn2"].generation + 1


# --- queries ---------------------------------------------------------------------------------------

def test_list_and_preview_take_constant_queries(client, db):
    def count(method, url, data):
        with CaptureQueriesContext(connection) as captured:
            response = getattr(client, method)(url, data)
        assert response.status_code == 200
        return len(captured)

    def grow(start, n):
        for i in range(start, start + n):
            rp = make_provider(f"node-{i:03d}", inventory={"VCPU": 8})
            allocate(make_consumer(), rp, VCPU=6)

    def measure():
        uuids = list(ResourceProvider.objects.values_list("uuid", flat=True))
        return (count("get", reverse("ui:bulk"), {"resource_class": "VCPU"}),
                count("post", reverse("ui:bulk-preview"), {
                    "resource_class": "VCPU", "provider": uuids, "allocation_ratio": "0.5"}))

    grow(0, 2)
    few = measure()
    grow(2, 25)
    assert measure() == few


def test_a_negative_ratio_is_refused_for_what_it_is(client, sample):
    # once said as "The reserved value is greater than total" on every preview row
    response = preview(client, [sample["cn2"]], allocation_ratio="-1")
    assert response.status_code == 400  # the form again, with its errors
    body = text(response)
    assert "The allocation ratio cannot be negative: capacity is (total − reserved) × " \
           "allocation ratio." in body
    assert "reserved value is greater" not in body
    assert not response.context.get("applicable")


# --- issue 43: choose by aggregate, trait, tree; all across pages; within capacity; batches --

def test_choose_by_aggregate_trait_or_tree(client, sample):
    from tests.ui.conftest import AGG

    def names(**filters):
        response = client.get(reverse("ui:bulk"), {"resource_class": "VCPU", **filters})
        return [r.provider_name for r in response.context["rows"]]

    # the filters select hosts; their trees' providers holding the class are listed
    assert names(trait="HW_NUMA_ROOT") == ["cn1-numa0", "cn1-numa1"]
    assert names(tree="cn1") == ["cn1-numa0", "cn1-numa1"]       # a host name: its tree
    assert names(tree=sample["numa1"].uuid) == ["cn1-numa0", "cn1-numa1"]
    assert names(resource_class="MEMORY_MB", aggregate=AGG) == ["cn1"]
    bad = client.get(reverse("ui:bulk"), {"resource_class": "VCPU", "trait": "NOPE",
                                          "tree": "nowhere", "aggregate": "x"})
    errors = bad.context["form"].errors
    assert errors["trait"] == ["No such trait NOPE."]
    assert errors["tree"] == ["No provider is named or has the uuid “nowhere”."]
    assert errors["aggregate"] == ["An aggregate is named by its uuid; “x” is not one."]


def test_every_matching_provider_across_pages(client, db):
    for i in range(60):
        make_provider(f"node-{i:03d}", inventory={"VCPU": 8})
    listed = client.get(reverse("ui:bulk"), {"resource_class": "VCPU", "name": "node"})
    assert len(listed.context["rows"]) == 50 and listed.context["page"].paginator.count == 60
    assert "every matching provider: all 60, on every page" in text(listed)
    response = client.post(reverse("ui:bulk-preview"), {
        "resource_class": "VCPU", "name": "node", "scope": "all", "allocation_ratio": "2"})
    assert len(response.context["applicable"]) == 60
    client.post(reverse("ui:bulk-apply"), apply_form(response))
    assert Inventory.objects.filter(allocation_ratio=2.0).count() == 60


def test_apply_refuses_going_over_unless_accepted_or_left_out(client, sample):
    numa0, numa1 = sample["numa0"], sample["numa1"]     # numa0 holds 6 of 8
    response = preview(client, [numa0, numa1], allocation_ratio="0.5")
    refused = client.post(reverse("ui:bulk-apply"), apply_form(response))
    assert shown(refused) == [
        "Nothing applied: 1 provider(s) would go over capacity: apply only where the change "
        "stays within capacity, or tick that you accept it."]
    assert vcpu(numa0)["allocation_ratio"] == vcpu(numa1)["allocation_ratio"] == 1.0
    client.post(reverse("ui:bulk-apply"), apply_form(response, within_only="on"))
    assert (vcpu(numa0)["allocation_ratio"], vcpu(numa1)["allocation_ratio"]) == (1.0, 0.5)


def test_a_batch_is_reverted_in_one_click(client, sample):
    numa0, numa1, cn2 = sample["numa0"], sample["numa1"], sample["cn2"]
    response = preview(client, [numa1, cn2], allocation_ratio="4", reserved="1")
    applied = client.post(reverse("ui:bulk-apply"), apply_form(response), follow=True)
    batch = applied.context["request_id"]
    assert "Revert the whole batch" in text(applied)
    # someone changes cn2 afterwards: its revert is refused, numa1's goes ahead
    inventory_services.inventory_set(
        provider=ResourceProvider.objects.get(pk=cn2.pk), resource_class="VCPU",
        generation=generation(cn2), record={"total": 32, "reserved": 1, "allocation_ratio": 4})
    reverted = client.post(reverse("ui:bulk-batch-revert", args=[batch]), follow=True)
    messages = [str(m) for m in reverted.context["messages"]]
    assert messages[0] == f"Batch {batch} reverted on 1 provider(s): cn1-numa1."
    assert messages[1].startswith("cn2 not reverted: Resource provider cn2 changed after this")
    assert (vcpu(numa1)["reserved"], vcpu(numa1)["allocation_ratio"]) == (0, 1.0)
    assert vcpu(cn2)["total"] == 32
    assert vcpu(numa0)["allocation_ratio"] == 1.0


def test_an_unknown_batch_is_a_404(client, db):
    assert client.get(reverse("ui:bulk-batch", args=["nope"])).status_code == 404


def test_aggregate_and_trait_reach_the_nested_providers_that_hold_the_class(client, sample):
    """Issue 52 row 1: cn1 is in the aggregate and has the trait; its VCPU is on its NUMA
    nodes. Both are listed, each saying why; the sharing disk in the aggregate holds no
    VCPU and is said to be left out."""
    from tests.ui.conftest import AGG

    response = client.get(reverse("ui:bulk"), {"resource_class": "VCPU", "aggregate": AGG})
    rows = response.context["rows"]
    assert [r.provider_name for r in rows] == ["cn1-numa0", "cn1-numa1"]
    why = response.context["why"]
    assert {why[r.provider_id] for r in rows} == {"in the tree of cn1"}
    body = text(response)
    assert "Left out: 1 matching tree without VCPU inventory anywhere: shared-disk." in body
    response = client.get(reverse("ui:bulk"), {"resource_class": "VCPU",
                                                "trait": "HW_CPU_X86_AVX2"})
    assert [r.provider_name for r in response.context["rows"]] == ["cn1-numa0", "cn1-numa1"]
    # and the change reaches them: every matching provider, across pages
    preview = client.post(reverse("ui:bulk-preview"), {
        "resource_class": "VCPU", "aggregate": AGG, "scope": "all", "allocation_ratio": "2"})
    assert sorted(r.before.provider_name for r in preview.context["applicable"]) == [
        "cn1-numa0", "cn1-numa1"]
