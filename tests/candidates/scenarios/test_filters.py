"""Less-travelled filter corners of §4.2/§4.3: any-of traits, member_of mixes, forbidden
aggregates and in_tree in suffixed groups, group_policy, limit with sharing providers."""
from functools import partial

import pytest

from tests.candidates import helpers
from tests.factories import make_provider

get_candidates = partial(helpers.get_candidates, version="1.39")

A = "a0000000-0000-0000-0000-00000000000a"
B = "b0000000-0000-0000-0000-00000000000b"
C = "c0000000-0000-0000-0000-00000000000c"
SHARING = ["MISC_SHARES_VIA_AGGREGATE"]


@pytest.fixture
def forest(db):
    """CN (VCPU, agg A, CUSTOM_R) with N0 (VCPU, MEMORY_MB, agg B, CUSTOM_X) and N1 (VCPU,
    CUSTOM_Y); CN2 (VCPU, MEMORY_MB, agg C, CUSTOM_X); sharing SS (DISK_GB, aggs A and C)."""
    p = {}
    p["CN"] = make_provider("CN", inventory={"VCPU": 8}, aggregates=[A], traits=["CUSTOM_R"])
    p["N0"] = make_provider("N0", parent=p["CN"], inventory={"VCPU": 4, "MEMORY_MB": 100},
                            aggregates=[B], traits=["CUSTOM_X"])
    p["N1"] = make_provider("N1", parent=p["CN"], inventory={"VCPU": 4}, traits=["CUSTOM_Y"])
    p["CN2"] = make_provider("CN2", inventory={"VCPU": 8, "MEMORY_MB": 100}, aggregates=[C],
                             traits=["CUSTOM_X"])
    p["SS"] = make_provider("SS", inventory={"DISK_GB": 100}, aggregates=[A, C],
                            traits=SHARING)
    return p


# --- any-of traits (1.39) -------------------------------------------------------------


def test_any_of_satisfied_collectively_by_the_chosen_providers(api, forest):
    assert get_candidates(api, "resources=VCPU:1,MEMORY_MB:10,DISK_GB:1"
                               "&required=in:CUSTOM_Y,CUSTOM_R", mappings=True) == [
        "CN(VCPU:1)+N0(MEMORY_MB:10)+SS(DISK_GB:1) maps :[CN,N0,SS]",
        "N0(MEMORY_MB:10)+N1(VCPU:1)+SS(DISK_GB:1) maps :[N0,N1,SS]",
    ]


def test_any_of_sets_are_anded(api, forest):
    assert get_candidates(api, "resources=VCPU:1,MEMORY_MB:10&required=in:CUSTOM_X,CUSTOM_Q"
                               "&required=in:CUSTOM_Y,CUSTOM_R", status=400)
    assert get_candidates(api, "resources=VCPU:1,MEMORY_MB:10&required=in:CUSTOM_X,CUSTOM_R"
                               "&required=in:CUSTOM_Y,CUSTOM_R") == [
        "CN(VCPU:1)+N0(MEMORY_MB:10)", "N0(MEMORY_MB:10)+N1(VCPU:1)"]


def test_any_of_with_forbidden_member(api, forest):
    """in:X,Y with !X: only a provider having Y and not X qualifies."""
    assert get_candidates(api, "resources=VCPU:1&required=in:CUSTOM_X,CUSTOM_Y"
                               "&required=!CUSTOM_X") == ["N1(VCPU:1)"]
    assert get_candidates(api, "resources_G=VCPU:1&required_G=in:CUSTOM_X,CUSTOM_Y"
                               "&required_G=!CUSTOM_X") == ["N1(VCPU:1)"]


def test_any_of_in_suffixed_group_needs_the_provider_itself(api, forest):
    assert get_candidates(api, "resources1=VCPU:1&required1=in:CUSTOM_X,CUSTOM_R") == [
        "CN(VCPU:1)", "CN2(VCPU:1)", "N0(VCPU:1)"]


def test_any_of_in_resourceless_group(api, forest):
    assert get_candidates(api, "resources=VCPU:1&required_T=in:CUSTOM_Y,HW_CPU_X86_AVX"
                               "&same_subtree=_T", mappings=True) == [
        "CN(VCPU:1) maps :[CN],_T:[N1]", "N0(VCPU:1) maps :[N0],_T:[N1]",
        "N1(VCPU:1) maps :[N1],_T:[N1]"]


# --- member_of mixes and forbidden aggregates -------------------------------------------


def test_unsuffixed_any_of_aggregates_with_forbidden(api, forest):
    """A on the root spans CN's tree, C is on CN2; N0 is itself in the forbidden B."""
    assert get_candidates(api, f"resources=VCPU:1&member_of=in:{A},{C}&member_of=!{B}") == [
        "CN(VCPU:1)", "CN2(VCPU:1)", "N1(VCPU:1)"]


def test_unsuffixed_forbidden_aggregate_on_root_excludes_its_tree(api, forest):
    assert get_candidates(api, f"resources=VCPU:1&member_of=!{A}") == ["CN2(VCPU:1)"]


def test_suffixed_forbidden_aggregate_looks_at_the_provider_only(api, forest):
    assert get_candidates(api, f"resources1=VCPU:1&member_of1=!{A}") == [
        "CN2(VCPU:1)", "N0(VCPU:1)", "N1(VCPU:1)"]
    assert get_candidates(api, f"resources1=VCPU:1&member_of1=!in:{A},{C}") == [
        "N0(VCPU:1)", "N1(VCPU:1)"]


def test_suffixed_any_of_aggregates_with_forbidden(api, forest):
    assert get_candidates(api, f"resources1=VCPU:1&member_of1=in:{A},{B}"
                               f"&member_of1=!{C}") == ["CN(VCPU:1)", "N0(VCPU:1)"]
    assert get_candidates(api, f"resources1=VCPU:1&member_of1={A}&member_of1=!{A}") == []


def test_suffixed_member_of_picks_sharing_provider(api, forest):
    """SS serves every tree sharing an aggregate with it; positive member_of on the
    unsuffixed group removes the trees whose VCPU provider is not in A."""
    assert get_candidates(api, f"resources=VCPU:1&resources1=DISK_GB:1&member_of1={A}") == [
        "CN(VCPU:1)+SS(DISK_GB:1)", "CN2(VCPU:1)+SS(DISK_GB:1)", "N0(VCPU:1)+SS(DISK_GB:1)",
        "N1(VCPU:1)+SS(DISK_GB:1)"]
    assert get_candidates(api, f"resources=VCPU:1&member_of={A}&resources1=DISK_GB:1") == [
        "CN(VCPU:1)+SS(DISK_GB:1)", "N0(VCPU:1)+SS(DISK_GB:1)", "N1(VCPU:1)+SS(DISK_GB:1)"]


# --- in_tree in suffixed groups -----------------------------------------------------------


def test_suffixed_in_tree_takes_the_whole_tree_of_a_child(api, forest):
    assert get_candidates(api, f"resources1=VCPU:1&in_tree1={forest['N1'].uuid}") == [
        "CN(VCPU:1)", "N0(VCPU:1)", "N1(VCPU:1)"]


def test_suffixed_in_tree_excludes_sharing_providers_of_other_trees(api, forest):
    assert get_candidates(api, f"resources1=DISK_GB:1&in_tree1={forest['CN'].uuid}") == []
    assert get_candidates(api, f"resources=VCPU:1&resources1=DISK_GB:1"
                               f"&in_tree1={forest['SS'].uuid}&in_tree={forest['CN2'].uuid}"
                          ) == ["CN2(VCPU:1)+SS(DISK_GB:1)"]


# --- group_policy ------------------------------------------------------------------------


def test_isolate_leaves_the_unsuffixed_group_free(api, forest):
    """isolate constrains suffixed groups among themselves only."""
    query = (f"resources=VCPU:1&in_tree={forest['CN2'].uuid}&resources1=VCPU:1"
             "&resources2=MEMORY_MB:1&group_policy=")
    assert get_candidates(api, query + "isolate") == []
    assert get_candidates(api, query + "none") == ["CN2(MEMORY_MB:1,VCPU:2)"]
    assert get_candidates(api, f"resources=VCPU:1&in_tree={forest['CN2'].uuid}"
                               "&resources1=VCPU:1&group_policy=isolate") == ["CN2(VCPU:2)"]


def test_group_policy_first_occurrence_wins(api, forest):
    query = f"resources1=VCPU:1&in_tree1={forest['CN2'].uuid}&resources2=MEMORY_MB:1"
    assert get_candidates(api, query + "&group_policy=none&group_policy=isolate") == [
        "CN2(MEMORY_MB:1,VCPU:1)"]
    assert get_candidates(api, query + "&group_policy=isolate&group_policy=none") == []


# --- limit with sharing providers --------------------------------------------------------


@pytest.fixture
def shared_hosts(db, monkeypatch):
    """Two sharing providers serving 40 hosts; small first batches so a limited request
    walks several root-id ranges."""
    from candidates.engine import batches as engine_batches
    monkeypatch.setattr(engine_batches, "FIRST_BATCH_ROOT_IDS", 4)
    make_provider("SS", inventory={"DISK_GB": 100}, aggregates=[A], traits=SHARING)
    for i in range(40):
        make_provider(f"CN{i:02}", inventory={"VCPU": 8}, aggregates=[A])
    make_provider("SS2", inventory={"DISK_GB": 100}, aggregates=[A], traits=SHARING)


def test_limit_counts_a_sharing_only_candidate_once(api, shared_hosts):
    assert get_candidates(api, "resources=DISK_GB:1") == ["SS(DISK_GB:1)", "SS2(DISK_GB:1)"]
    for limit in (1, 2, 3):
        got = get_candidates(api, f"resources=DISK_GB:1&limit={limit}")
        assert got == ["SS(DISK_GB:1)", "SS2(DISK_GB:1)"][:limit]


@pytest.mark.parametrize("query", ["resources=VCPU:1,DISK_GB:1",
                                   "resources=VCPU:1&resources1=DISK_GB:1"])
def test_limit_across_batches_with_sharing(api, shared_hosts, query):
    full = get_candidates(api, query)
    assert len(full) == 80 and len(set(full)) == 80
    for limit in (1, 5, 11, 79, 80, 81):
        response = api.get(f"/allocation_candidates?{query}&limit={limit}", version="1.39")
        got = helpers.describe(response.json())
        assert len(got) == min(limit, 80) and len(set(got)) == len(got)
        assert set(got) <= set(full)
        hosts = {part.split("(")[0] for candidate in got for part in candidate.split("+")}
        assert helpers.summary_names(response.json()) == sorted(hosts)
