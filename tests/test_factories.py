"""The test data builders go through the services: what a service refuses, they refuse.

Each of these would pass silently if tests/factories.py wrote the rows through the models.
"""
import pytest

from allocations import exceptions as allocation_exceptions
from allocations.models import Allocation, Consumer
from providers import exceptions as provider_exceptions
from providers.models import ChangeRecord, Inventory, ResourceProvider
from tests.factories import allocate, make_consumer, make_provider, set_inventory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("record", [
    {"total": 4, "step_size": 0},
    {"total": 4, "min_unit": 0},
    {"total": 0},
    {"total": 4, "reserved": -1},
])
def test_a_bad_inventory_value_is_the_services_error(record):
    with pytest.raises(provider_exceptions.InvalidInventoryValue):
        make_provider("cn", inventory={"VCPU": record})
    assert not Inventory.objects.exists()


def test_unknown_standard_names_are_refused_not_invented():
    with pytest.raises(provider_exceptions.UnknownResourceClass):
        make_provider("cn", inventory={"NOT_A_CLASS": 1})
    with pytest.raises(provider_exceptions.UnknownTraits):
        make_provider("cn2", traits=["NOT_A_TRAIT"])


def test_a_child_needs_an_existing_parent():
    ghost = ResourceProvider(uuid="8b1f5c1e-8d2c-4d8a-9a55-3a4b5c6d7e8f", name="ghost")
    with pytest.raises(provider_exceptions.InvalidProvider):
        make_provider("orphan", parent=ghost)


def test_allocations_are_checked_against_capacity_and_inventory():
    rp = make_provider("cn", inventory={"VCPU": 4, "DISK_GB": {"total": 100, "step_size": 10}})
    with pytest.raises(allocation_exceptions.CapacityExceeded):
        allocate(make_consumer(), rp, VCPU=5)
    with pytest.raises(allocation_exceptions.InvalidInventory):
        allocate(make_consumer(), rp, MEMORY_MB=1)
    with pytest.raises(allocation_exceptions.InvalidAllocationConstraints):
        allocate(make_consumer(), rp, DISK_GB=15)
    assert not Allocation.objects.exists() and not Consumer.objects.exists()


def test_writes_are_the_services_generation_checked_logged_writes():
    rp = make_provider("cn", inventory={"VCPU": 8}, traits=["CUSTOM_FAST"],
                       aggregates=["8b1f5c1e-8d2c-4d8a-9a55-3a4b5c6d7e8f"])
    assert rp.generation == 3  # inventories, traits, aggregates: one bump each
    vm = make_consumer()
    allocate(vm, rp, VCPU=2)
    allocate(vm, rp, VCPU=3)  # adds to what vm holds: one replace of its whole set
    assert (vm.generation, rp.generation) == (2, 5)
    assert Allocation.objects.get(consumer=vm).used == 3
    actions = list(ChangeRecord.objects.filter(entity=rp.uuid).order_by("id")
                   .values_list("action", flat=True))
    assert actions == ["create", "inventories", "traits", "aggregates",
                       "allocations", "allocations"]
    set_inventory(rp, {"VCPU": 2})  # below usage: Placement allows it
    assert rp.generation == 6


def test_unchecked_is_the_one_way_around_the_services():
    rp = make_provider("cn", inventory={"VCPU": 4})
    empty = make_consumer(unchecked=True)
    assert Consumer.objects.filter(pk=empty.pk, generation=1).exists()
    allocate(make_consumer(), rp, VCPU=6, MEMORY_MB=1, unchecked=True)
    assert Allocation.objects.count() == 2
    assert ResourceProvider.objects.get(pk=rp.pk).generation == 1  # no service wrote
