"""§7.5 root_required."""
import pytest

from tests.candidates.helpers import get_candidates
from tests.factories import make_provider


@pytest.fixture
def hosts(db):
    make_provider("NON_NUMA_CN", inventory={"VCPU": 8, "MEMORY_MB": 1024, "DISK_GB": 1000},
                  traits=["HW_CPU_X86_AVX2", "STORAGE_DISK_SSD", "COMPUTE_VOLUME_MULTI_ATTACH",
                          "CUSTOM_WINDOWS_LICENSE_POOL"])
    cn = make_provider("NUMA_CN", inventory={"DISK_GB": 1000},
                       traits=["STORAGE_DISK_SSD", "COMPUTE_VOLUME_MULTI_ATTACH"])
    make_provider("NUMA1", parent=cn, inventory={"VCPU": 4, "MEMORY_MB": 1024})
    make_provider("NUMA2", parent=cn, inventory={"VCPU": 4, "MEMORY_MB": 1024},
                  traits=["HW_CPU_X86_AVX2"])


def test_root_required_with_granular(api, hosts):
    got = get_candidates(api, "resources1=VCPU:1,MEMORY_MB:512&required1=HW_CPU_X86_AVX2"
                              "&resources2=DISK_GB:100&group_policy=none"
                              "&root_required=COMPUTE_VOLUME_MULTI_ATTACH", mappings=True)
    assert got == [
        "NON_NUMA_CN(DISK_GB:100,MEMORY_MB:512,VCPU:1) maps 1:[NON_NUMA_CN],2:[NON_NUMA_CN]",
        "NUMA2(MEMORY_MB:512,VCPU:1)+NUMA_CN(DISK_GB:100) maps 1:[NUMA2],2:[NUMA_CN]",
    ]


def test_root_forbidden(api, hosts):
    assert get_candidates(api, "resources1=VCPU:1,MEMORY_MB:512&resources2=DISK_GB:100"
                               "&group_policy=none&root_required=!CUSTOM_WINDOWS_LICENSE_POOL") == [
        "NUMA1(MEMORY_MB:512,VCPU:1)+NUMA_CN(DISK_GB:100)",
        "NUMA2(MEMORY_MB:512,VCPU:1)+NUMA_CN(DISK_GB:100)",
    ]


def test_required_counts_only_suppliers(api, hosts):
    assert get_candidates(api, "resources=VCPU:1&required=COMPUTE_VOLUME_MULTI_ATTACH") == [
        "NON_NUMA_CN(VCPU:1)"]


def test_root_required_spans_tree(api, hosts):
    assert get_candidates(api, "resources=VCPU:1&root_required=COMPUTE_VOLUME_MULTI_ATTACH") == [
        "NON_NUMA_CN(VCPU:1)", "NUMA1(VCPU:1)", "NUMA2(VCPU:1)"]


def test_root_required_sharing_trait(api, hosts):
    assert get_candidates(api, "resources=VCPU:1&root_required=MISC_SHARES_VIA_AGGREGATE") == []
    assert len(get_candidates(
        api, "resources=VCPU:1&root_required=!MISC_SHARES_VIA_AGGREGATE")) == 3


def test_root_required_unknown_trait(api, hosts):
    response = api.get("/allocation_candidates?resources=VCPU:1&root_required=CUSTOM_NOPE")
    assert response.status_code == 400
    assert "No such trait(s): CUSTOM_NOPE." in response.json()["errors"][0]["detail"]
