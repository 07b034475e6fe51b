"""The reusable provider predicates of providers.querysets, on small data sets."""
import pytest
from django.db import connection

from allocations import usage
from providers import querysets as q
from providers.models import ResourceClass, ResourceProvider, Trait
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db

AGG1 = "aaaaaaaa-1111-1111-1111-111111111111"
AGG2 = "22222222-2222-2222-2222-222222222222"


def rc(name):
    return ResourceClass.objects.get(name=name).id


def trait(name):
    return Trait.objects.get_or_create(name=name)[0].id


def names(qs):
    return sorted(qs.values_list("name", flat=True))


def test_capacity_sql_leaves_the_planner_nothing_to_misjudge():
    # the usage sum is a plain aggregate (no GROUP BY ... LIMIT 1 for the planner to
    # stop a scan early on), and step_size = 1 comes before MOD (see capacity_provider_ids)
    sql = str(usage.capacity_provider_ids(rc("VCPU"), 2).query)
    assert "LIMIT" not in sql and "GROUP BY" not in sql
    assert f'{connection.ops.quote_name("step_size")} = 1 OR' in sql


def test_capacity_counts_usage_reserved_ratio_and_units():
    a = make_provider("a", inventory={"VCPU": {"total": 4, "reserved": 1,
                                               "allocation_ratio": 2.0, "max_unit": 5}})
    make_provider("b", inventory={"VCPU": {"total": 8, "step_size": 2}})
    make_provider("c", inventory={"DISK_GB": 100})
    allocate(make_consumer(), a, VCPU=2)
    rps = ResourceProvider.objects.all()
    # a: capacity (4-1)*2 = 6, used 2 -> 4 more fit; max_unit 5
    assert names(usage.with_capacity(rps, {rc("VCPU"): 4})) == ["a", "b"]
    assert names(usage.with_capacity(rps, {rc("VCPU"): 5})) == []  # a: 2+5>6; b: step 2
    assert names(usage.with_capacity(rps, {rc("VCPU"): 6})) == ["b"]  # a: max_unit 5
    assert names(usage.with_capacity(rps, {rc("VCPU"): 1})) == ["a"]  # b: step 2
    assert names(usage.with_capacity(rps, {rc("VCPU"): 2, rc("DISK_GB"): 1})) == []
    assert names(usage.with_capacity(rps, {rc("DISK_GB"): 100})) == ["c"]
    assert set(usage.capacity_provider_ids(rc("VCPU"), 2)) == set(
        ResourceProvider.objects.filter(name__in=["a", "b"]).values_list("id", flat=True))


def test_min_unit():
    make_provider("a", inventory={"VCPU": {"total": 8, "min_unit": 2}})
    assert names(usage.with_capacity(ResourceProvider.objects.all(), {rc("VCPU"): 1})) == []
    assert names(usage.with_capacity(ResourceProvider.objects.all(), {rc("VCPU"): 2})) == ["a"]


def test_traits():
    make_provider("a", traits=["CUSTOM_A", "CUSTOM_B"])
    make_provider("b", traits=["CUSTOM_B"])
    make_provider("c")
    rps = ResourceProvider.objects.all()
    A, B = trait("CUSTOM_A"), trait("CUSTOM_B")
    assert names(q.with_all_traits(rps, [A, B])) == ["a"]
    assert names(q.with_all_traits(rps, [B])) == ["a", "b"]
    assert names(q.with_any_traits(rps, [A, B])) == ["a", "b"]
    assert names(q.without_traits(rps, [A])) == ["b", "c"]
    assert names(q.with_trait_sets(rps, [{A, B}, {B}])) == ["a", "b"]
    assert names(q.with_trait_sets(rps, [{A}, {B}])) == ["a"]


def test_aggregates_and_tree():
    root = make_provider("root", aggregates=[AGG1])
    make_provider("child", parent=root, aggregates=[AGG2])
    make_provider("both", aggregates=[AGG1, AGG2])
    rps = ResourceProvider.objects.all()
    assert names(q.member_of(rps, [{AGG1}])) == ["both", "root"]
    assert names(q.member_of(rps, [{AGG1}, {AGG2}])) == ["both"]
    assert names(q.member_of(rps, [{AGG1, AGG2}])) == ["both", "child", "root"]
    assert names(q.not_member_of(rps, {AGG2})) == ["root"]
    assert names(q.member_of(rps, [{AGG1.upper()}])) == []  # exact strings
    assert names(q.in_tree(rps, root.id)) == ["child", "root"]
