"""Service-level contracts other components rely on (reshaper, admin, commands)."""
import threading

import pytest
from django.db import connection, connections, transaction

from foundation.domain_errors import Conflict, InvalidInput
from providers import exceptions, rules
from providers.models import Inventory, ResourceProvider
from providers.services import inventories as inventory_services
from providers.services import providers as provider_services
from providers.services.tree_lock import lock_trees
from tests.conftest import PlacementClient
from tests.factories import allocate, make_consumer, make_provider


@pytest.mark.django_db
def test_write_inventories_composes_inside_an_outer_transaction():
    rp = make_provider("cn", inventory={"VCPU": 8, "DISK_GB": 10})
    allocate(make_consumer(), rp, VCPU=2)  # generation 2: the inventory, the allocation
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            # interim step: merge (VCPU stays), no capacity check (reshaper quirk)
            inventory_services.write_inventories(
                provider=rp, inventories={"MEMORY_MB": {"total": 4, "reserved": 10}},
                generation=2, remove_missing=False, capacity_rule=None)
            # final step: replace
            inventory_services.write_inventories(
                provider=rp, inventories={"VCPU": {"total": 4}}, generation=3)
            assert rp.generation == 4
            assert set(Inventory.objects.filter(provider=rp).values_list(
                "resource_class__name", flat=True)) == {"VCPU"}
            raise RuntimeError("the outer transaction decides")
    assert ResourceProvider.objects.get(pk=rp.pk).generation == 2
    assert Inventory.objects.filter(provider=rp).count() == 2


@pytest.mark.django_db
def test_write_inventories_errors():
    rp = make_provider("cn", inventory={"VCPU": 8})
    allocate(make_consumer(), rp, VCPU=2)
    with pytest.raises(exceptions.UnknownResourceClass) as info:
        with transaction.atomic():
            inventory_services.write_inventories(provider=rp, inventories={"NOPE": {"total": 1}})
    assert info.value.name == "NOPE"
    with pytest.raises(Conflict) as info:
        with transaction.atomic():
            inventory_services.write_inventories(provider=rp, inventories={})
    assert info.value.code == "placement.inventory.inuse"
    with pytest.raises(InvalidInput):
        with transaction.atomic():
            inventory_services.write_inventories(
                provider=rp, inventories={"VCPU": {"total": 1, "reserved": 1}},
                capacity_rule=rules.CAPACITY_POSITIVE)
    assert ResourceProvider.objects.get(pk=rp.pk).generation == 2  # as the set-up left it


def test_rules_capacity():
    record = rules.with_defaults({"total": 4, "reserved": 4})
    assert rules.inventory_capacity_error("VCPU", "u", record, rules.CAPACITY_NON_NEGATIVE) is None
    assert "greater than or equal" in rules.inventory_capacity_error(
        "VCPU", "u", record, rules.CAPACITY_POSITIVE)
    assert rules.capacity(4, 1, 1.5) == 4.5
    assert rules.reported_capacity(4, 1, 1.5) == 4


@pytest.mark.django_db(transaction=True)
def test_tree_lock_requires_a_transaction():
    with pytest.raises(RuntimeError):
        lock_trees()


@pytest.mark.django_db
def test_provider_bump_generation_is_compare_and_swap():
    rp = make_provider("cn")
    assert provider_services.provider_bump_generation(rp) == 1
    stale = ResourceProvider.objects.get(pk=rp.pk)
    stale.generation = 0
    with pytest.raises(Conflict) as info:
        provider_services.provider_bump_generation(stale)
    assert info.value.code == "placement.concurrent_update"


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor == "sqlite", reason="needs concurrent writers")
def test_concurrent_inventory_writes_one_wins():
    rp = make_provider("cn")
    barrier = threading.Barrier(4)
    statuses = []

    def put(total):
        try:
            barrier.wait()
            resp = PlacementClient().put(
                f"/resource_providers/{rp.uuid}/inventories",
                {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": total}}})
            statuses.append(resp.status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=put, args=(n + 1,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200, 409, 409, 409]
    assert ResourceProvider.objects.get(pk=rp.pk).generation == 1
    assert Inventory.objects.filter(provider=rp).count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["custom_lower", "CUSTOM_", "HW_CPU_X86_AVX", "VCPU",
                                  "CUSTOM_" + "X" * 249, "CUSTOM_A-B", ""])
def test_catalogue_services_refuse_names_that_may_not_be_created(name):
    """The services guard the catalogue, whoever calls them (API, UI, admin, commands)."""
    from providers.models import ResourceClass, Trait
    from providers.services import resource_classes, traits

    classes, trait_count = ResourceClass.objects.count(), Trait.objects.count()
    with pytest.raises(exceptions.InvalidCustomName) as refused:
        traits.trait_ensure(name=name)
    assert refused.value.message == rules.INVALID_TRAIT
    for create in (resource_classes.resource_class_create,
                   resource_classes.resource_class_ensure):
        with pytest.raises(exceptions.InvalidCustomName) as refused:
            create(name=name)
        assert refused.value.message.startswith("JSON does not validate: ")
    resource_classes.resource_class_create(name="CUSTOM_OLD")
    with pytest.raises(exceptions.InvalidCustomName):
        resource_classes.resource_class_rename(name="CUSTOM_OLD", new_name=name)
    assert ResourceClass.objects.filter(name="CUSTOM_OLD").exists()
    assert (ResourceClass.objects.count(), Trait.objects.count()) == (classes + 1, trait_count)
