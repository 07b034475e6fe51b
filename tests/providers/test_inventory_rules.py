"""Inventory field rules: the services refuse every bad value, Model.clean() reports
it, and the database refuses it when the services are bypassed (inventories.md)."""
import math

import pytest
from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, connection, transaction

from allocations.models import Allocation
from providers import exceptions, rules
from providers.models import Inventory, ResourceClass, ResourceProvider
from providers.services import inventories as services
from providers.services.providers import provider_create
from tests.factories import allocate, make_consumer

MAX_INT = rules.MAX_INT

# (field, bad value): every value no Placement request can store.
BAD_VALUES = [
    ("step_size", 0), ("step_size", -1), ("step_size", MAX_INT + 1),
    ("min_unit", 0), ("min_unit", -5), ("max_unit", 0), ("max_unit", MAX_INT + 1),
    ("total", 0), ("total", -1), ("total", MAX_INT + 1), ("total", None),
    ("reserved", -1), ("reserved", MAX_INT + 1),
    ("total", 4.5), ("total", "4"), ("total", True), ("step_size", 1.5),
    ("allocation_ratio", math.nan), ("allocation_ratio", math.inf),
    ("allocation_ratio", 3.5e38), ("allocation_ratio", "1.0"), ("allocation_ratio", False),
]


def bad_record(field, value):
    record = {"total": 4}
    record[field] = value
    return {key: val for key, val in record.items() if val is not None}


@pytest.fixture
def provider(db):
    rp = provider_create(name="cn")
    services.inventories_replace(provider=rp, generation=0, inventories={"VCPU": {"total": 8}})
    return ResourceProvider.objects.get(pk=rp.pk)


def assert_unchanged(provider):
    assert ResourceProvider.objects.get(pk=provider.pk).generation == 1
    assert list(Inventory.objects.filter(provider=provider).values_list(
        "resource_class__name", "total", "step_size")) == [("VCPU", 8, 1)]


@pytest.mark.parametrize("field,value", BAD_VALUES)
def test_inventories_replace_refuses(provider, field, value):
    with pytest.raises(exceptions.InvalidInventoryValue) as raised:
        services.inventories_replace(provider=provider, generation=1,
                                     inventories={"VCPU": bad_record(field, value)})
    assert raised.value.message.startswith(
        f"Invalid inventory for 'VCPU' on resource provider '{provider.uuid}': {field}")
    assert raised.value.code == "placement.undefined_code"
    assert_unchanged(provider)


@pytest.mark.parametrize("field,value", BAD_VALUES)
def test_inventory_set_create_and_reshaper_core_refuse(provider, field, value):
    with pytest.raises(exceptions.InvalidInventoryValue):
        services.inventory_set(provider=provider, resource_class="VCPU", generation=1,
                               record=bad_record(field, value))
    with pytest.raises(exceptions.InvalidInventoryValue):
        services.inventory_create(provider=provider, resource_class="DISK_GB",
                                  record=bad_record(field, value))
    with pytest.raises(exceptions.InvalidInventoryValue):  # the reshaper's path
        with transaction.atomic():
            services.write_inventories(provider=provider, inventories={
                "VCPU": bad_record(field, value)}, capacity_rule=None)
    assert_unchanged(provider)


def test_the_step_size_zero_of_the_issue(provider):
    with pytest.raises(exceptions.InvalidInventoryValue) as raised:
        services.inventories_replace(provider=provider, generation=1,
                                     inventories={"VCPU": {"total": 4, "step_size": 0}})
    assert raised.value.message.endswith(
        "step_size must be an integer from 1 to 2147483647; got 0.")


@pytest.mark.parametrize("record,rule,error", [
    ({"total": 4, "reserved": 5}, rules.CAPACITY_NON_NEGATIVE, "greater than total."),
    ({"total": 4, "reserved": 4}, rules.CAPACITY_POSITIVE, "greater than or equal to total."),
    ({"total": 4, "allocation_ratio": 0.0}, rules.CAPACITY_POSITIVE,
     "greater than or equal to total."),
    ({"total": 4, "allocation_ratio": -1.0}, rules.CAPACITY_NON_NEGATIVE, "greater than total."),
])
def test_capacity_rule_per_microversion(provider, record, rule, error):
    with pytest.raises(exceptions.InvalidInventoryCapacity) as raised:
        services.inventories_replace(provider=provider, generation=1,
                                     inventories={"VCPU": record}, capacity_rule=rule)
    assert raised.value.message == (
        f"Unable to update inventory for resource provider {provider.uuid}: Invalid "
        f"inventory for 'VCPU' on resource provider '{provider.uuid}'. The reserved value "
        f"is {error}")
    assert_unchanged(provider)


@pytest.mark.parametrize("record", [
    {"total": 4, "min_unit": 8, "max_unit": 2},      # min_unit > max_unit
    {"total": 4, "max_unit": 100},                    # max_unit > total
    {"total": 4, "reserved": 4},                      # capacity 0 (1.26+)
    {"total": 4, "allocation_ratio": 0.0},            # ratio 0 (1.26+)
    {"total": 4, "reserved": 4, "allocation_ratio": -2.0},  # no lower bound on the ratio
    {"total": 4.0, "step_size": 2.0},                 # JSON 4.0 is an integer
    {"total": MAX_INT, "reserved": MAX_INT, "min_unit": MAX_INT, "max_unit": MAX_INT,
     "step_size": MAX_INT, "allocation_ratio": rules.MAX_ALLOCATION_RATIO},
])
def test_what_placement_accepts_is_stored(provider, record):
    written = services.inventories_replace(provider=provider, generation=1,
                                           inventories={"VCPU": record})
    row = Inventory.objects.get(provider=provider)
    assert {field: getattr(row, field) for field in rules.INVENTORY_FIELDS} == written["VCPU"]


def test_model_clean_reports_ranges_and_capacity(provider):
    row = Inventory.objects.get(provider=provider)
    row.step_size = 0
    with pytest.raises(ValidationError) as raised:
        row.full_clean()
    assert "step_size" in raised.value.message_dict
    row.step_size, row.reserved = 1, 9
    with pytest.raises(ValidationError) as raised:
        row.full_clean()
    assert raised.value.message_dict["reserved"] == [
        f"Invalid inventory for 'VCPU' on resource provider '{provider.uuid}'. "
        "The reserved value is greater than total."]
    row.reserved = 8
    row.full_clean()  # capacity 0 is allowed at the latest microversion


# --- the database: the last net when the services are bypassed ---------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("field,value", [
    (field, value) for field, value in BAD_VALUES
    if value is not None and not isinstance(value, (str, bool))
    and not (isinstance(value, float) and (math.isnan(value) or not value.is_integer()))
])
def test_database_refuses_an_update_around_the_services(field, value):
    rp = provider_create(name="cn")
    services.inventories_replace(provider=rp, generation=0, inventories={"VCPU": {"total": 8}})
    # PostgreSQL's and MySQL's (strict) 32-bit integer columns refuse MAX_INT + 1 before
    # the constraint does.
    refused = (DataError if value == MAX_INT + 1 and connection.vendor in ("postgresql", "mysql")
               else IntegrityError)
    with pytest.raises(refused):
        with transaction.atomic():
            Inventory.objects.filter(provider=rp).update(**{field: value})
    assert Inventory.objects.get(provider=rp).total == 8


@pytest.mark.django_db(transaction=True)
def test_database_refuses_an_insert_around_the_services():
    rp = provider_create(name="cn")
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            Inventory.objects.create(provider=rp, resource_class=ResourceClass.objects.get(
                name="VCPU"), total=4, step_size=0)
    assert not Inventory.objects.filter(provider=rp).exists()


@pytest.mark.django_db(transaction=True)
def test_database_refuses_an_allocation_of_nothing():
    rp = provider_create(name="cn")
    services.inventories_replace(provider=rp, generation=0, inventories={"VCPU": {"total": 8}})
    consumer = make_consumer()
    allocate(consumer, rp, VCPU=2)
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            Allocation.objects.filter(consumer=consumer).update(used=0)
    assert Allocation.objects.get(consumer=consumer).used == 2
