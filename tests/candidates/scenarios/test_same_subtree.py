"""§7.6 same_subtree and resourceless groups."""
import pytest

from tests.candidates.helpers import get_candidates
from tests.conftest import error_code
from tests.factories import allocate, make_consumer, make_provider


@pytest.fixture
def numa(db):
    cn = make_provider("CN")
    n0 = make_provider("NUMA0", parent=cn, inventory={"VCPU": 4, "MEMORY_MB": 2048},
                       traits=["HW_NUMA_ROOT"])
    n1 = make_provider("NUMA1", parent=cn, inventory={"VCPU": 4, "MEMORY_MB": 2048},
                       traits=["HW_NUMA_ROOT"])
    make_provider("FPGA0_0", parent=n0, inventory={"FPGA": 1}, traits=["CUSTOM_TYPE1"])
    make_provider("FPGA1_0", parent=n1, inventory={"FPGA": 1}, traits=["CUSTOM_TYPE1"])
    make_provider("FPGA1_1", parent=n1, inventory={"FPGA": 1}, traits=["CUSTOM_TYPE2"])
    return n0


BASE = "resources_COMPUTE=VCPU:1,MEMORY_MB:256&resources_ACCEL=FPGA:1"


def test_every_pair_without_same_subtree(api, numa):
    assert len(get_candidates(api, BASE + "&group_policy=none")) == 6


def test_same_subtree_pairs(api, numa):
    got = get_candidates(api, BASE + "&group_policy=none&same_subtree=_COMPUTE,_ACCEL")
    assert got == ["FPGA0_0(FPGA:1)+NUMA0(MEMORY_MB:256,VCPU:1)",
                   "FPGA1_0(FPGA:1)+NUMA1(MEMORY_MB:256,VCPU:1)",
                   "FPGA1_1(FPGA:1)+NUMA1(MEMORY_MB:256,VCPU:1)"]


def test_group_policy_required(api, numa):
    get_candidates(api, BASE + "&same_subtree=_COMPUTE,_ACCEL", status=400)


RESOURCELESS = ("required_NUMA=HW_NUMA_ROOT&resources_ACCEL1=FPGA:1&required_ACCEL1=CUSTOM_TYPE1"
                "&resources_ACCEL2=FPGA:1&required_ACCEL2=CUSTOM_TYPE2&group_policy=none")


def test_resourceless_group(api, numa):
    got = get_candidates(api, RESOURCELESS + "&same_subtree=_NUMA,_ACCEL1,_ACCEL2", mappings=True)
    assert got == ["FPGA1_0(FPGA:1)+FPGA1_1(FPGA:1) maps _ACCEL1:[FPGA1_0],_ACCEL2:[FPGA1_1],"
                   "_NUMA:[NUMA1]"]


def test_resourceless_group_needs_same_subtree(api, numa):
    response = api.get("/allocation_candidates?" + RESOURCELESS)
    assert response.status_code == 400
    assert error_code(response) == "placement.query.bad_value"


def test_design_document_model_with_usage(api, numa):
    allocate(make_consumer(), numa, VCPU=2)
    got = get_candidates(api, "resources_COMPUTE=VCPU:2,MEMORY_MB:512&resources_ACCEL=FPGA:1"
                              "&same_subtree=_COMPUTE,_ACCEL&group_policy=none")
    assert got == ["FPGA0_0(FPGA:1)+NUMA0(MEMORY_MB:512,VCPU:2)",
                   "FPGA1_0(FPGA:1)+NUMA1(MEMORY_MB:512,VCPU:2)",
                   "FPGA1_1(FPGA:1)+NUMA1(MEMORY_MB:512,VCPU:2)"]


@pytest.fixture
def nics(db):
    cn = make_provider("CN")
    nic1 = make_provider("nic1", parent=cn, traits=["CUSTOM_HW_NIC_ROOT"])
    nic2 = make_provider("nic2", parent=cn, traits=["CUSTOM_HW_NIC_ROOT"])
    make_provider("pf1_1", parent=nic1, inventory={"SRIOV_NET_VF": 4}, traits=["CUSTOM_NET1"])
    make_provider("pf1_2", parent=nic1, inventory={"SRIOV_NET_VF": 4}, traits=["CUSTOM_NET2"])
    make_provider("pf2_1", parent=nic2, inventory={"SRIOV_NET_VF": 2}, traits=["CUSTOM_NET1"])
    make_provider("pf2_2", parent=nic2, inventory={"SRIOV_NET_VF": 2}, traits=["CUSTOM_NET2"])


VIFS = ("resources_VIF_NET1=SRIOV_NET_VF:1&required_VIF_NET1=CUSTOM_NET1"
        "&resources_VIF_NET2=SRIOV_NET_VF:1&required_VIF_NET2=CUSTOM_NET2&group_policy=none")


def test_nic_affinity(api, nics):
    got = get_candidates(api, VIFS + "&required_NIC_AFFINITY=CUSTOM_HW_NIC_ROOT"
                                     "&same_subtree=_VIF_NET1,_VIF_NET2,_NIC_AFFINITY",
                         mappings=True)
    assert got == [
        "pf1_1(SRIOV_NET_VF:1)+pf1_2(SRIOV_NET_VF:1) maps _NIC_AFFINITY:[nic1],"
        "_VIF_NET1:[pf1_1],_VIF_NET2:[pf1_2]",
        "pf2_1(SRIOV_NET_VF:1)+pf2_2(SRIOV_NET_VF:1) maps _NIC_AFFINITY:[nic2],"
        "_VIF_NET1:[pf2_1],_VIF_NET2:[pf2_2]",
    ]


def test_nic_without_affinity(api, nics):
    assert len(get_candidates(api, VIFS)) == 4


@pytest.fixture
def one_nic(db):
    cn = make_provider("CN")
    nic1 = make_provider("nic1", parent=cn, traits=["CUSTOM_HW_NIC_ROOT"])
    make_provider("nic2", parent=cn, traits=["CUSTOM_HW_NIC_ROOT"])
    make_provider("pf1_1", parent=nic1, inventory={"SRIOV_NET_VF": 4})
    make_provider("pf1_2", parent=nic1, inventory={"SRIOV_NET_VF": 4})


ONE_NIC = ("resources_VIF1=SRIOV_NET_VF:1&resources_VIF2=SRIOV_NET_VF:1"
           "&required_NIC_AFFINITY=CUSTOM_HW_NIC_ROOT&same_subtree=_VIF1,_VIF2,_NIC_AFFINITY")
TWO = [
    "pf1_1(SRIOV_NET_VF:1)+pf1_2(SRIOV_NET_VF:1) maps _NIC_AFFINITY:[nic1],_VIF1:[pf1_1],"
    "_VIF2:[pf1_2]",
    "pf1_1(SRIOV_NET_VF:1)+pf1_2(SRIOV_NET_VF:1) maps _NIC_AFFINITY:[nic1],_VIF1:[pf1_2],"
    "_VIF2:[pf1_1]",
]


def test_mapping_only_difference_is_two_candidates(api, one_nic):
    assert get_candidates(api, ONE_NIC + "&group_policy=isolate", mappings=True) == TWO
    # below 1.34 they are identical entries (Quirk Q3)
    assert get_candidates(api, ONE_NIC + "&group_policy=isolate", version="1.36") == [
        "pf1_1(SRIOV_NET_VF:1)+pf1_2(SRIOV_NET_VF:1)"] * 2


def test_one_nic_none(api, one_nic):
    assert get_candidates(api, ONE_NIC + "&group_policy=none", mappings=True) == sorted(TWO + [
        "pf1_1(SRIOV_NET_VF:2) maps _NIC_AFFINITY:[nic1],_VIF1:[pf1_1],_VIF2:[pf1_1]",
        "pf1_2(SRIOV_NET_VF:2) maps _NIC_AFFINITY:[nic1],_VIF1:[pf1_2],_VIF2:[pf1_2]"])


def test_one_nic_root_required(api, one_nic):
    assert get_candidates(api, ONE_NIC + "&group_policy=isolate"
                               "&root_required=CUSTOM_HW_NIC_ROOT") == []


@pytest.fixture
def ports(db):
    cn = make_provider("CN", inventory={"VCPU": 8})
    nic = make_provider("NIC", parent=cn, traits=["CUSTOM_HW_NIC_ROOT"])
    make_provider("PF1", parent=nic, inventory={"CUSTOM_VF": 8}, traits=["CUSTOM_PHYSNET1"])


def test_resourceless_may_share_provider_with_resourceful(api, ports):
    query = ("resources_PORT1=CUSTOM_VF:8&required_PORT2=CUSTOM_PHYSNET1"
             "&same_subtree=_PORT1,_PORT2&group_policy=")
    assert get_candidates(api, query + "none", mappings=True) == [
        "PF1(CUSTOM_VF:8) maps _PORT1:[PF1],_PORT2:[PF1]"]
    assert get_candidates(api, query + "isolate") == []


def test_two_same_subtree_occurrences_are_independent(api, ports):
    query = ("resources_COMPUTE=VCPU:1&resources_PORT1=CUSTOM_VF:1"
             "&required_NIC=CUSTOM_HW_NIC_ROOT&same_subtree=_NIC,_COMPUTE"
             "&same_subtree=_NIC,_PORT1&group_policy=none")
    assert get_candidates(api, query) == ["CN(VCPU:1)+PF1(CUSTOM_VF:1)"]


NUMA_ACCEL = ("required_NUMA=HW_NUMA_ROOT&resources_ACCEL=FPGA:1&required_ACCEL=CUSTOM_TYPE2"
              "&same_subtree=_NUMA,_ACCEL&group_policy=none")


def test_resourceless_group_ignores_existing_in_tree(api, numa):
    """Q5: in_tree_NUMA names another tree, yet NUMA1 still serves the group."""
    other = make_provider("OTHER_CN", inventory={"FPGA": 1})
    got = get_candidates(api, f"{NUMA_ACCEL}&in_tree_NUMA={other.uuid}", mappings=True)
    assert got == ["FPGA1_1(FPGA:1) maps _ACCEL:[FPGA1_1],_NUMA:[NUMA1]"]


def test_resourceless_group_with_missing_in_tree_is_empty(api, numa):
    """§3.6: a missing in_tree provider empties the answer, in a resourceless group too."""
    response = api.get(f"/allocation_candidates?{NUMA_ACCEL}"
                       "&in_tree_NUMA=00000000-0000-0000-0000-00000000dead")
    assert response.status_code == 200
    assert response.json() == {"allocation_requests": [], "provider_summaries": {}}


@pytest.mark.parametrize("only", ["required_NUMA=!CUSTOM_TYPE1",
                                  "member_of_NUMA=!a0000000-0000-0000-0000-00000000000a",
                                  "in_tree_NUMA={cn}"])
def test_resourceless_group_without_positive_filter_matches_nothing(api, numa, only):
    """Q5: only forbidden traits, forbidden aggregates or in_tree select no provider."""
    from providers.models import ResourceProvider
    only = only.format(cn=ResourceProvider.objects.get(name="CN").uuid)
    query = f"resources_ACCEL=FPGA:1&{only}&same_subtree=_NUMA,_ACCEL&group_policy=none"
    assert get_candidates(api, query) == []
    assert len(get_candidates(api, query.replace(only, "required_NUMA=HW_NUMA_ROOT"))) == 3


def test_resourceless_group_by_member_of_only(api, numa):
    agg = "a0000000-0000-0000-0000-00000000000a"
    from providers.models import Aggregate, ProviderAggregate, ResourceProvider
    ProviderAggregate.objects.create(provider=ResourceProvider.objects.get(name="NUMA0"),
                                     aggregate=Aggregate.objects.create(uuid=agg))
    got = get_candidates(api, f"resources_ACCEL=FPGA:1&member_of_NUMA={agg}"
                              "&same_subtree=_NUMA,_ACCEL&group_policy=none", mappings=True)
    assert got == ["FPGA0_0(FPGA:1) maps _ACCEL:[FPGA0_0],_NUMA:[NUMA0]"]
