"""§7.7 Granular requests (design document use cases) and §7.8 consolidation limits."""
import pytest

from tests.candidates.helpers import get_candidates
from tests.factories import make_provider

BW = "CUSTOM_NET_EGRESS_BYTES_SEC"


def _pf(name, parent, bw, traits, reserved=0):
    return make_provider(name, parent=parent, traits=traits, inventory={
        "SRIOV_NET_VF": {"total": 16, "reserved": reserved}, BW: bw})


@pytest.fixture
def pfs(db):
    cn = make_provider("CN1", inventory={"VCPU": 16, "MEMORY_MB": 4096})
    _pf("RP1", cn, 1250000000, ["CUSTOM_NET1", "HW_NIC_ACCEL_SSL"])
    _pf("RP2", cn, 1250000000, ["CUSTOM_NET2", "HW_NIC_ACCEL_SSL"])
    _pf("RP3", cn, 125000000, ["CUSTOM_NET1"])
    _pf("RP4", cn, 125000000, ["CUSTOM_NET2"])


@pytest.mark.parametrize("policy", ["isolate", "none"])
def test_use_case_1(api, pfs, policy):
    got = get_candidates(api, "resources1=SRIOV_NET_VF:1&required1=CUSTOM_NET1"
                              "&resources2=SRIOV_NET_VF:1&required2=CUSTOM_NET2"
                              f"&group_policy={policy}")
    assert got == sorted("+".join(sorted([f"{a}(SRIOV_NET_VF:1)", f"{b}(SRIOV_NET_VF:1)"]))
                         for a in ("RP1", "RP3") for b in ("RP2", "RP4"))


def test_use_case_2(api, pfs):
    assert get_candidates(api, f"resources1=SRIOV_NET_VF:1,{BW}:10000") == [
        f"RP{i}({BW}:10000,SRIOV_NET_VF:1)" for i in (1, 2, 3, 4)]


UC3 = (f"resources1=SRIOV_NET_VF:1,{BW}:10000&required1=CUSTOM_NET1"
       f"&resources2=SRIOV_NET_VF:1,{BW}:20000&required2=CUSTOM_NET2,HW_NIC_ACCEL_SSL")


def test_use_case_3(api, pfs):
    assert get_candidates(api, UC3 + "&group_policy=none") == [
        f"RP1({BW}:10000,SRIOV_NET_VF:1)+RP2({BW}:20000,SRIOV_NET_VF:1)",
        f"RP2({BW}:20000,SRIOV_NET_VF:1)+RP3({BW}:10000,SRIOV_NET_VF:1)"]


def test_use_case_3_with_unsuffixed(api, pfs):
    assert get_candidates(api, UC3 + "&resources=VCPU:2,MEMORY_MB:2048&group_policy=isolate") == [
        f"CN1(MEMORY_MB:2048,VCPU:2)+RP1({BW}:10000,SRIOV_NET_VF:1)+RP2({BW}:20000,SRIOV_NET_VF:1)",
        f"CN1(MEMORY_MB:2048,VCPU:2)+RP2({BW}:20000,SRIOV_NET_VF:1)+RP3({BW}:10000,SRIOV_NET_VF:1)"]


@pytest.fixture
def busy_pfs(db):
    cn = make_provider("CN1", inventory={"VCPU": 16, "MEMORY_MB": 4096})
    for name, bw, traits in (("RP1", 1250000000, ["CUSTOM_NET1", "HW_NIC_ACCEL_SSL"]),
                             ("RP2", 1250000000, ["CUSTOM_NET2", "HW_NIC_ACCEL_SSL"]),
                             ("RP3", 125000000, ["CUSTOM_NET1"]),
                             ("RP4", 125000000, ["CUSTOM_NET2"])):
        _pf(name, cn, bw, traits, reserved=14)


def test_use_case_4_amount_never_split(api, busy_pfs):
    assert get_candidates(api, "resources=SRIOV_NET_VF:4&required=CUSTOM_NET1") == []


@pytest.mark.parametrize("policy", ["isolate", "none"])
def test_use_case_4_two_groups(api, busy_pfs, policy):
    got = get_candidates(api, "resources1=SRIOV_NET_VF:2&required1=CUSTOM_NET1"
                              "&resources2=SRIOV_NET_VF:2&required2=CUSTOM_NET1"
                              f"&group_policy={policy}", mappings=True)
    assert got == ["RP1(SRIOV_NET_VF:2)+RP3(SRIOV_NET_VF:2) maps 1:[RP1],2:[RP3]",
                   "RP1(SRIOV_NET_VF:2)+RP3(SRIOV_NET_VF:2) maps 1:[RP3],2:[RP1]"]


@pytest.fixture
def consolidation(db):
    make_provider("cn_left", inventory={"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 500, "VGPU": 8,
                                        "SRIOV_NET_VF": 8, "CUSTOM_NET_MBPS": 4000})
    make_provider("cn_middle", inventory={"VCPU": 8, "MEMORY_MB": 4096, "SRIOV_NET_VF": 8,
                                          "CUSTOM_NET_MBPS": 4000})
    make_provider("cn_right", aggregates=["a0000000-0000-0000-0000-00000000000a"],
                  inventory={"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 500,
                             "VGPU": {"total": 8, "max_unit": 2}})
    make_provider("shr_net", aggregates=["a0000000-0000-0000-0000-00000000000a"],
                  traits=["MISC_SHARES_VIA_AGGREGATE"],
                  inventory={"SRIOV_NET_VF": 16, "CUSTOM_NET_MBPS": 40000})


def test_consolidated_max_unit(api, consolidation):
    assert get_candidates(api, "resources=VGPU:1&resources1=VGPU:1&resources2=VGPU:1"
                               "&group_policy=none") == ["cn_left(VGPU:3)"]


def test_consolidated_capacity_with_sharing(api, consolidation):
    assert get_candidates(api, "resources=VCPU:2,MEMORY_MB:2048,SRIOV_NET_VF:1,"
                               "CUSTOM_NET_MBPS:2000&resources1=SRIOV_NET_VF:1,"
                               "CUSTOM_NET_MBPS:3000") == [
        "cn_right(MEMORY_MB:2048,VCPU:2)+shr_net(CUSTOM_NET_MBPS:5000,SRIOV_NET_VF:2)"]


def test_isolate_needs_two_providers(api, consolidation):
    assert get_candidates(api, "resources1=VCPU:1&resources2=MEMORY_MB:1024"
                               "&group_policy=isolate") == []


def test_none_puts_both_on_one_provider(api, consolidation):
    assert get_candidates(api, "resources1=VCPU:1&resources2=MEMORY_MB:1024"
                               "&group_policy=none") == [
        f"{h}(MEMORY_MB:1024,VCPU:1)" for h in ("cn_left", "cn_middle", "cn_right")]


def test_sums_across_three_groups(api, consolidation):
    assert get_candidates(api, "resources=VCPU:3,MEMORY_MB:512&resources1=VCPU:1,MEMORY_MB:1024"
                               "&resources2=VCPU:2&group_policy=none") == [
        f"{h}(MEMORY_MB:1536,VCPU:6)" for h in ("cn_left", "cn_middle", "cn_right")]


@pytest.fixture
def two_numa(db):
    cn = make_provider("CN")
    make_provider("N0", parent=cn, inventory={"VCPU": 4})
    make_provider("N1", parent=cn, inventory={"VCPU": 4})


def test_same_class_in_two_groups_sums_correctly(api, two_numa):
    """D1: the contract requires the correct sums."""
    for policy in ("none",):
        got = get_candidates(api, f"resources=VCPU:2&resources1=VCPU:1&group_policy={policy}")
        assert got == ["N0(VCPU:1)+N1(VCPU:2)", "N0(VCPU:2)+N1(VCPU:1)", "N0(VCPU:3)",
                       "N1(VCPU:3)"]


def test_sharing_only_partial_kept_per_anchor(api, db):
    """D2: both CN1+SS and CN2+SS are returned."""
    agg = "a0000000-0000-0000-0000-00000000000a"
    make_provider("SS", inventory={"DISK_GB": 100}, aggregates=[agg],
                  traits=["MISC_SHARES_VIA_AGGREGATE"])
    make_provider("CN1", inventory={"VCPU": 4}, aggregates=[agg])
    make_provider("CN2", inventory={"VCPU": 4}, aggregates=[agg])
    assert get_candidates(api, "resources=DISK_GB:10&resources1=VCPU:1") == [
        "CN1(VCPU:1)+SS(DISK_GB:10)", "CN2(VCPU:1)+SS(DISK_GB:10)"]
