"""§7.4 in_tree."""
import pytest

from tests.candidates.helpers import get_candidates
from tests.factories import make_provider

A = "a0000000-0000-0000-0000-00000000000a"
SHARING = ["MISC_SHARES_VIA_AGGREGATE"]


@pytest.fixture
def forest(db):
    p = {}
    p["SS1"] = make_provider("SS1", inventory={"DISK_GB": 1000}, aggregates=[A], traits=SHARING)
    p["SS2"] = make_provider("SS2", inventory={"DISK_GB": 1000}, aggregates=[A], traits=SHARING)
    for i in (1, 2):
        cn = p[f"CN{i}"] = make_provider(f"CN{i}", inventory={"DISK_GB": 1000}, aggregates=[A])
        for j in (1, 2):
            p[f"NUMA{i}_{j}"] = make_provider(f"NUMA{i}_{j}", parent=cn, inventory={"VCPU": 4})
    return p


def test_twelve_without_in_tree(api, forest):
    got = get_candidates(api, "resources=VCPU:1,DISK_GB:50")
    expected = []
    for i in (1, 2):
        for j in (1, 2):
            numa = f"NUMA{i}_{j}(VCPU:1)"
            expected += [f"CN{i}(DISK_GB:50)+{numa}", f"{numa}+SS1(DISK_GB:50)",
                         f"{numa}+SS2(DISK_GB:50)"]
    assert got == sorted(expected)


@pytest.mark.parametrize("member", ["CN1", "NUMA1_1"])
def test_unsuffixed_in_tree_uses_no_sharing(api, forest, member):
    assert get_candidates(api, f"resources=VCPU:1,DISK_GB:50&in_tree={forest[member].uuid}") == [
        "CN1(DISK_GB:50)+NUMA1_1(VCPU:1)", "CN1(DISK_GB:50)+NUMA1_2(VCPU:1)"]


def test_in_tree_unsuffixed_with_granular_disk(api, forest):
    got = get_candidates(api, f"resources=VCPU:1&in_tree={forest['CN1'].uuid}"
                              "&resources1=DISK_GB:10")
    assert got == sorted(f"{d}(DISK_GB:10)+NUMA1_{j}(VCPU:1)" if d == "CN1"
                         else f"NUMA1_{j}(VCPU:1)+{d}(DISK_GB:10)"
                         for d in ("CN1", "SS1", "SS2") for j in (1, 2))


def test_in_tree_on_granular_sharing_provider(api, forest):
    got = get_candidates(api, f"resources=VCPU:1&resources1=DISK_GB:10"
                              f"&in_tree1={forest['SS1'].uuid}")
    assert got == sorted(f"NUMA{i}_{j}(VCPU:1)+SS1(DISK_GB:10)" for i in (1, 2) for j in (1, 2))


def test_two_granular_in_trees(api, forest):
    got = get_candidates(api, f"resources1=VCPU:1&in_tree1={forest['CN1'].uuid}"
                              f"&resources2=DISK_GB:10&in_tree2={forest['SS1'].uuid}"
                              "&group_policy=isolate")
    assert got == ["NUMA1_1(VCPU:1)+SS1(DISK_GB:10)", "NUMA1_2(VCPU:1)+SS1(DISK_GB:10)"]


def test_unknown_in_tree_is_empty(api, forest):
    got = get_candidates(api, "resources=VCPU:1&in_tree=00000000-0000-0000-0000-00000000dead")
    assert got == []


@pytest.fixture
def variant(db):
    p = {}
    p["SS"] = make_provider("SS", inventory={"DISK_GB": 1000}, aggregates=[A], traits=SHARING)
    p["SS2"] = make_provider("SS2", inventory={"DISK_GB": 1000}, aggregates=[A], traits=SHARING)
    p["CN1"] = make_provider("CN1", inventory={"VCPU": 8}, aggregates=[A])
    p["CN2"] = make_provider("CN2", inventory={"VCPU": 8, "DISK_GB": 1000}, aggregates=[A])
    return p


def test_variant(api, variant):
    query = "resources=VCPU:1,DISK_GB:10&in_tree="
    assert get_candidates(api, query + variant["CN1"].uuid) == []
    assert get_candidates(api, query + variant["CN2"].uuid) == ["CN2(DISK_GB:10,VCPU:1)"]
    assert get_candidates(api, query + variant["SS"].uuid) == []
