"""§7.3 Traits in a tree."""
import pytest

from tests.candidates.helpers import get_candidates
from tests.factories import make_provider

R = "VCPU:1,MEMORY_MB:512,DISK_GB:500"
CN = "CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1)"


@pytest.fixture
def tree(db):
    cn1 = make_provider("CN1", inventory={"VCPU": 8, "MEMORY_MB": 1024, "DISK_GB": 1000})
    make_provider("NIC1_1", parent=cn1, inventory={"SRIOV_NET_VF": 8},
                  traits=["HW_NIC_ACCEL_SSL"])
    make_provider("NIC1_2", parent=cn1, inventory={"SRIOV_NET_VF": 8})


def test_required_trait_on_child(api, tree):
    assert get_candidates(api, f"resources={R},SRIOV_NET_VF:2&required=HW_NIC_ACCEL_SSL") == [
        f"{CN}+NIC1_1(SRIOV_NET_VF:2)"]


def test_forbidden_trait_on_child(api, tree):
    assert get_candidates(api, f"resources={R},SRIOV_NET_VF:2&required=!HW_NIC_ACCEL_SSL") == [
        f"{CN}+NIC1_2(SRIOV_NET_VF:2)"]


def test_no_trait_filter(api, tree):
    assert get_candidates(api, f"resources={R},SRIOV_NET_VF:2") == [
        f"{CN}+NIC1_1(SRIOV_NET_VF:2)", f"{CN}+NIC1_2(SRIOV_NET_VF:2)"]


def test_any_of_traits(api, tree):
    assert get_candidates(
        api, f"resources={R},SRIOV_NET_VF:2&required=in:HW_NIC_ACCEL_SSL,HW_NIC_SRIOV",
        version="1.39") == [f"{CN}+NIC1_1(SRIOV_NET_VF:2)"]


def test_trait_of_provider_supplying_nothing_does_not_count(api, tree):
    assert get_candidates(api, "resources=VCPU:1&required=HW_NIC_ACCEL_SSL") == []


GRANULAR = (f"resources={R}&resources1=SRIOV_NET_VF:1&required1=HW_NIC_ACCEL_SSL"
            "&resources2=SRIOV_NET_VF:1")


def test_granular_isolate(api, tree):
    assert get_candidates(api, GRANULAR + "&group_policy=isolate", mappings=True) == [
        f"{CN}+NIC1_1(SRIOV_NET_VF:1)+NIC1_2(SRIOV_NET_VF:1) maps :[CN1],1:[NIC1_1],2:[NIC1_2]"]


def test_granular_none(api, tree):
    assert get_candidates(api, GRANULAR + "&group_policy=none", mappings=True) == [
        f"{CN}+NIC1_1(SRIOV_NET_VF:1)+NIC1_2(SRIOV_NET_VF:1) maps :[CN1],1:[NIC1_1],2:[NIC1_2]",
        f"{CN}+NIC1_1(SRIOV_NET_VF:2) maps :[CN1],1:[NIC1_1],2:[NIC1_1]",
    ]
