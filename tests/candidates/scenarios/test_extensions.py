"""The opt-in extensions at 1.40, through the API: one test per case of
docs/clients/extensions.md (root_member_of, isolate)."""
import pytest

from tests.candidates.helpers import get_candidates
from tests.conftest import error_code
from tests.factories import make_provider

AZ1 = "a0000000-0000-0000-0000-0000000000a1"
AZ2 = "a0000000-0000-0000-0000-0000000000a2"
SHARE = "5a000000-0000-0000-0000-00000000005a"
UNKNOWN = "f0000000-0000-0000-0000-00000000000f"


@pytest.fixture(autouse=True)
def extensions_on(settings):
    settings.PLACEMENT_EXTENSIONS = frozenset({"root_member_of", "isolate"})


def ask(api, query, **kw):
    return get_candidates(api, query, version="1.40", **kw)


def refusal(api, query, version="1.40"):
    response = api.get("/allocation_candidates?" + query, version=version)
    assert response.status_code == 400, response.content
    return response


# --- root_member_of --------------------------------------------------------------------------


@pytest.fixture
def zones(db):
    """CN1 (in AZ1) and CN2 (in AZ2), each with two NUMA children (VCPU 4) and DISK_GB on
    the root; NUMA2_1 is itself in AZ1. SS (sharing DISK_GB) is in SHARE with both
    roots, and in AZ2 itself."""
    cn1 = make_provider("CN1", inventory={"DISK_GB": 100}, aggregates=[AZ1, SHARE])
    make_provider("NUMA1_1", parent=cn1, inventory={"VCPU": 4})
    make_provider("NUMA1_2", parent=cn1, inventory={"VCPU": 4})
    cn2 = make_provider("CN2", inventory={"DISK_GB": 100}, aggregates=[AZ2, SHARE])
    make_provider("NUMA2_1", parent=cn2, inventory={"VCPU": 4}, aggregates=[AZ1])
    make_provider("NUMA2_2", parent=cn2, inventory={"VCPU": 4})
    make_provider("SS", inventory={"DISK_GB": 1000}, traits=["MISC_SHARES_VIA_AGGREGATE"],
                  aggregates=[SHARE, AZ2])


def test_root_member_of_keeps_the_trees_whose_root_is_in_the_aggregate(api, zones):
    assert ask(api, f"resources1=VCPU:1&root_member_of={AZ1}") == [
        "NUMA1_1(VCPU:1)", "NUMA1_2(VCPU:1)"]


def test_granular_member_of_looks_at_the_provider_not_the_root(api, zones):
    # what root_member_of is for: member_of1 asks the NUMA node itself
    assert ask(api, f"resources1=VCPU:1&member_of1={AZ1}") == ["NUMA2_1(VCPU:1)"]


def test_root_member_of_an_aggregate_on_a_child_does_not_count(api, zones):
    # NUMA2_1 is in AZ1, its root CN2 is not
    assert "NUMA2_1(VCPU:1)" not in ask(api, f"resources=VCPU:1&root_member_of={AZ1}")


def test_root_member_of_in_list(api, zones):
    assert len(ask(api, f"resources=VCPU:1&root_member_of=in:{AZ1},{AZ2}")) == 4


def test_root_member_of_forbidden(api, zones):
    assert ask(api, f"resources=VCPU:1&root_member_of=!{AZ1}") == [
        "NUMA2_1(VCPU:1)", "NUMA2_2(VCPU:1)"]
    assert ask(api, f"resources=VCPU:1&root_member_of=!in:{AZ1},{AZ2}") == []


def test_root_member_of_repeated_is_anded(api, zones):
    assert len(ask(api, f"resources=VCPU:1&root_member_of={SHARE}")) == 4
    assert ask(api, f"resources=VCPU:1&root_member_of={SHARE}&root_member_of={AZ2}") == [
        "NUMA2_1(VCPU:1)", "NUMA2_2(VCPU:1)"]
    assert ask(api, f"resources=VCPU:1&root_member_of={AZ1}&root_member_of={AZ2}") == []


def test_root_member_of_sharing_provider_tree_is_not_the_root(api, zones):
    # SS is in AZ2 and serves CN1 (AZ1): kept with CN1, whatever SS is a member of
    query = "resources=VCPU:1,DISK_GB:10"
    assert ask(api, f"{query}&root_member_of={AZ1}") == [
        "CN1(DISK_GB:10)+NUMA1_1(VCPU:1)", "CN1(DISK_GB:10)+NUMA1_2(VCPU:1)",
        "NUMA1_1(VCPU:1)+SS(DISK_GB:10)", "NUMA1_2(VCPU:1)+SS(DISK_GB:10)"]
    assert len(ask(api, f"{query}&root_member_of=!{AZ2}")) == 4


def test_root_member_of_sharing_only_candidate_follows_the_trees_it_serves(api, zones):
    # SS alone serves CN1 and CN2 (through SHARE) and its own tree
    assert "SS(DISK_GB:10)" in ask(api, f"resources=DISK_GB:10&root_member_of={AZ1}")


def test_root_member_of_unknown_aggregate(api, zones):
    assert ask(api, f"resources=VCPU:1&root_member_of={UNKNOWN}") == []
    assert len(ask(api, f"resources=VCPU:1&root_member_of=!{UNKNOWN}")) == 4
    assert len(ask(api, f"resources=VCPU:1&root_member_of=in:{UNKNOWN},{AZ1}")) == 2


def test_root_member_of_with_no_root_in_it_hides_later_unknown_names(api, zones):
    # §3.6: the root step proves the answer empty before the unknown class is reached
    assert ask(api, f"resources=NOPE:1&root_member_of={UNKNOWN}") == []
    refusal(api, f"resources=NOPE:1&root_member_of={AZ1}")


def test_root_member_of_suffixed_is_refused(api, zones):
    refusal(api, f"resources1=VCPU:1&root_member_of1={AZ1}")


def test_root_member_of_below_1_40_is_refused(api, zones):
    refusal(api, f"resources=VCPU:1&root_member_of={AZ1}", version="1.39")


# --- isolate ---------------------------------------------------------------------------------


@pytest.fixture
def numa_nics(db):
    """CN with NUMA0 and NUMA1 (VCPU 4, HW_NUMA_ROOT); under each NUMA node two PFs with
    SRIOV_NET_VF 4 (NUMA1's second PF has no VF left: none)."""
    cn = make_provider("CN")
    for n, pfs in ((0, 2), (1, 1)):
        numa = make_provider(f"NUMA{n}", parent=cn, inventory={"VCPU": 4},
                             traits=["HW_NUMA_ROOT"])
        for p in range(pfs):
            make_provider(f"PF{n}_{p}", parent=numa, inventory={"SRIOV_NET_VF": 4})


TWO_VFS = ("resources_COMPUTE=VCPU:2&required_NUMA=HW_NUMA_ROOT"
           "&resources_VF1=SRIOV_NET_VF:1&resources_VF2=SRIOV_NET_VF:1"
           "&same_subtree=_NUMA,_COMPUTE,_VF1,_VF2")


def test_isolate_keeps_listed_groups_apart_and_lets_others_share(api, numa_nics):
    # two VFs from two PFs of the NUMA node that gives the VCPU (and is _NUMA)
    assert ask(api, f"{TWO_VFS}&isolate=_VF1,_VF2", mappings=True) == [
        "NUMA0(VCPU:2)+PF0_0(SRIOV_NET_VF:1)+PF0_1(SRIOV_NET_VF:1) maps "
        "_COMPUTE:[NUMA0],_NUMA:[NUMA0],_VF1:[PF0_0],_VF2:[PF0_1]",
        "NUMA0(VCPU:2)+PF0_0(SRIOV_NET_VF:1)+PF0_1(SRIOV_NET_VF:1) maps "
        "_COMPUTE:[NUMA0],_NUMA:[NUMA0],_VF1:[PF0_1],_VF2:[PF0_0]"]


def test_isolate_compared_with_group_policy(api, numa_nics):
    # isolate: _COMPUTE and _NUMA may not both be the NUMA node: nothing
    assert ask(api, f"{TWO_VFS}&group_policy=isolate") == []
    # none: both VFs may come from one PF (also on NUMA1)
    assert len(ask(api, f"{TWO_VFS}&group_policy=none")) == 5


def test_isolate_unsuffixed_group_shares(api, numa_nics):
    got = ask(api, "resources=SRIOV_NET_VF:1&resources_VF1=SRIOV_NET_VF:1"
                   "&resources_VF2=SRIOV_NET_VF:1&isolate=_VF1,_VF2")
    assert "PF0_0(SRIOV_NET_VF:2)+PF0_1(SRIOV_NET_VF:1)" in got
    assert not any("SRIOV_NET_VF:3" in candidate for candidate in got)


def test_isolate_resourceless_group(api, numa_nics):
    # the resourceless _NUMA may share the provider of _COMPUTE unless both are listed
    query = "resources_COMPUTE=VCPU:1&required_NUMA=HW_NUMA_ROOT&same_subtree=_COMPUTE,_NUMA"
    assert ask(api, f"{query}&isolate=_COMPUTE") == ["NUMA0(VCPU:1)", "NUMA1(VCPU:1)"]
    assert ask(api, f"{query}&isolate=_COMPUTE,_NUMA") == []


def test_isolate_with_same_subtree(api, numa_nics):
    # same_subtree still holds: both VFs under the NUMA node of the VCPU
    got = ask(api, f"{TWO_VFS}&isolate=_VF1,_VF2")
    assert all("NUMA0" in candidate and "PF1" not in candidate for candidate in got)


def test_isolate_of_one_suffix_isolates_nothing(api, numa_nics):
    assert ask(api, f"{TWO_VFS}&isolate=_VF1") == ask(api, f"{TWO_VFS}&group_policy=none")


def test_isolate_repeated_is_the_union(api, numa_nics):
    assert ask(api, f"{TWO_VFS}&isolate=_VF1&isolate=_VF2") == ask(
        api, f"{TWO_VFS}&isolate=_VF1,_VF2")


def test_isolate_replaces_group_policy(api, numa_nics):
    # two suffixed groups need group_policy, or isolate
    refusal(api, "resources_VF1=SRIOV_NET_VF:1&resources_VF2=SRIOV_NET_VF:1")
    assert len(ask(api, "resources_VF1=SRIOV_NET_VF:1&resources_VF2=SRIOV_NET_VF:1"
                        "&isolate=_VF1,_VF2")) == 6


def test_isolate_with_group_policy_is_refused(api, numa_nics):
    response = refusal(api, f"{TWO_VFS}&isolate=_VF1,_VF2&group_policy=none")
    assert error_code(response) == "placement.query.bad_value"


def test_isolate_unknown_suffix_is_refused(api, numa_nics):
    response = refusal(api, f"{TWO_VFS}&isolate=VF1,_VF2")
    assert error_code(response) == "placement.query.bad_value"
    assert "Real suffixes should be specified in `isolate`" in response.json()[
        "errors"][0]["detail"]


def test_isolate_naming_the_unsuffixed_group_is_refused(api, numa_nics):
    response = refusal(api, "resources=VCPU:1&resources_VF1=SRIOV_NET_VF:1&isolate=,_VF1")
    assert error_code(response) == "placement.query.bad_value"


def test_isolate_below_1_40_is_refused(api, numa_nics):
    refusal(api, f"{TWO_VFS}&isolate=_VF1,_VF2", version="1.39")
