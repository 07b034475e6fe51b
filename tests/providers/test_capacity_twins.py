"""The capacity formula's SQL twins give what providers.rules.capacity() gives, on
awkward values (fractional ratios, reserved == total, reserved > total as the
reshaper may store, huge totals)."""
import pytest
from django.db import transaction

from allocations.status_checks import over_capacity_rows
from allocations import usage
from providers import querysets, rules
from providers.models import Inventory, ResourceClass
from providers.services import inventories as services
from providers.services.providers import provider_create
from tests.factories import allocate, make_consumer

MAX_INT = rules.MAX_INT

# (total, reserved, allocation_ratio, used)
AWKWARD = [
    (10, 0, 0.1, 1),                 # 10 * 0.1 == 1.0 exactly: used == capacity
    (30, 0, 0.1, 3),                 # 3.0000000000000004
    (3, 0, 0.1, 1),                  # 0.30000000000000004 < 1
    (7, 0, 1 / 3, 2),                # 2.333...
    (7, 0, 1 / 3, 3),
    (4, 4, 1.0, 1),                  # reserved == total
    (4, 5, 2.0, 1),                  # reserved > total (negative capacity)
    (MAX_INT, 0, 16.0, MAX_INT),     # huge total * ratio beyond 32 bits
    (MAX_INT, 1, 1.0, MAX_INT - 1),
    (MAX_INT, 1, 1.0, MAX_INT),
    (5, 1, 1.5, 6),
    (5, 1, 1.5, 7),
    (100, 1, 0.0, 1),                # ratio 0
    (8, 8, -2.0, 1),                 # negative ratio (no lower bound)
    (9, 0, 1.0000001, 9),
]


@pytest.fixture
def inventories(db):
    """{inventory id: (total, reserved, ratio, used)}, written through the services
    (the reshaper's path: no capacity rule; usage set first, inventory lowered after)."""
    rows = {}
    for index, (total, reserved, ratio, used) in enumerate(AWKWARD):
        rp = provider_create(name=f"rp{index}")
        services.inventories_replace(provider=rp, generation=0,
                                     inventories={"VCPU": {"total": MAX_INT}})
        allocate(make_consumer(), rp, VCPU=used)
        with transaction.atomic():
            services.write_inventories(provider=rp, capacity_rule=None, inventories={
                "VCPU": {"total": total, "reserved": reserved, "allocation_ratio": ratio}})
        rows[Inventory.objects.get(provider=rp).pk] = (total, reserved, ratio, used)
    return rows


def test_capacity_expression_equals_python(inventories):
    in_sql = dict(Inventory.objects.annotate(cap=querysets.capacity_expression())
                  .values_list("pk", "cap"))
    assert in_sql == {pk: rules.capacity(total, reserved, ratio)
                      for pk, (total, reserved, ratio, _) in inventories.items()}


def test_placement_status_over_capacity_equals_python(inventories):
    over = {(used, total, reserved) for _, _, used, total, reserved, _ in
            over_capacity_rows()}
    assert over == {(used, total, reserved)
                    for total, reserved, ratio, used in inventories.values()
                    if used > rules.capacity(total, reserved, ratio)}
    assert over  # the data has both sides
    assert len(over) < len(inventories)


def test_capacity_filter_equals_python(inventories):
    vcpu = ResourceClass.objects.get(name="VCPU").pk
    for amount in (1, 2):
        fits = set(usage.capacity_provider_ids(vcpu, amount))
        expected = {Inventory.objects.get(pk=pk).provider_id
                    for pk, (total, reserved, ratio, used) in inventories.items()
                    if used + amount <= rules.capacity(total, reserved, ratio)}
        assert fits == expected


def test_over_capacity_filter_equals_python(inventories):
    over = set(usage.over_capacity_provider_ids())
    expected = {Inventory.objects.get(pk=pk).provider_id
                for pk, (total, reserved, ratio, used) in inventories.items()
                if used > rules.capacity(total, reserved, ratio)}
    assert over == expected
    assert over and len(over) < len(inventories)


def test_capacity_page_rows_equal_sql(inventories):
    """The capacity page computes in Python (allocations.usage) what the
    over-capacity health check asks the database: the same pairs are over capacity."""
    from allocations.usage import inventory_usages

    unused = provider_create(name="unused")     # negative capacity, nothing allocated
    with transaction.atomic():
        services.write_inventories(provider=unused, capacity_rule=None, inventories={
            "VCPU": {"total": 4, "reserved": 5}})
    in_python = {row.provider_uuid for row in inventory_usages() if row.over_capacity}
    assert in_python == {uuid for uuid, *_ in over_capacity_rows()}
    assert unused.uuid not in in_python
    assert {row.used for row in inventory_usages()} == {
        used for *_, used in inventories.values()} | {0}


# (total, reserved, allocation_ratio, min_unit, max_unit, step_size, used)
UNIT_LIMITED = [
    (16, 0, 1.0, 2, 16, 1, 0),       # min_unit 2
    (16, 0, 1.0, 1, 4, 1, 0),        # max_unit 4
    (16, 0, 1.0, 1, 16, 4, 0),       # step_size 4
    (16, 0, 1.0, 4, 8, 4, 4),        # all three, something used
    (10, 1, 1.5, 1, 13, 3, 6),       # 13.5: 6 + 6 fits, 6 + 9 does not
    (8, 0, 1.0, 1, 8, 1, 2),         # 2 + 6 == capacity
]


def test_room_q_equals_move_refusal(inventories):
    """providers.usage.room_q, the move picker's SQL test, keeps exactly the
    inventories allocations.rules.move_refusal (the write's tests for one record) has
    nothing against, for amounts with and without units the consumer holds there."""
    from django.db.models import Value

    from allocations.rules import InventoryLimits, move_refusal

    for index, (total, reserved, ratio, min_unit, max_unit, step, used) in enumerate(
            UNIT_LIMITED):
        rp = provider_create(name=f"limited{index}")
        services.inventories_replace(provider=rp, generation=0, inventories={"VCPU": {
            "total": total, "reserved": reserved, "allocation_ratio": ratio,
            "min_unit": min_unit, "max_unit": max_unit, "step_size": step}})
        if used:
            allocate(make_consumer(), rp, VCPU=used)
    rows = list(usage.with_usage(Inventory.objects.all()).values_list(
        "pk", "total", "reserved", "allocation_ratio", "min_unit", "max_unit",
        "step_size", "used"))
    checked = set()
    for amount in (1, 2, 3, 4, 6, 9, MAX_INT):
        for held in (0, 1, 2, 4):
            in_sql = set(usage.with_usage(Inventory.objects.all())
                         .filter(usage.room_q(amount, units=Value(held + amount)))
                         .values_list("pk", flat=True))
            in_python = {pk for pk, total, reserved, ratio, min_unit, max_unit, step, used
                         in rows if move_refusal(amount, held, used, InventoryLimits(
                             total, reserved, min_unit, max_unit, step, ratio)) is None}
            assert in_sql == in_python, (amount, held)
            checked.add(bool(in_python))
    assert checked == {True, False}   # amounts that fit somewhere, and nowhere
