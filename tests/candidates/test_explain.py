"""candidates/explain/: each kind of reason, asked of the explainer directly."""
import pytest
from django.http import QueryDict

from candidates import explain as explainer
from candidates import search
from candidates.exceptions import InvalidCandidatesQuery
from candidates.request import parse_request
from foundation.api.microversion import Version
from tests.candidates.helpers import Counted
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db

AGG_A = "a0000000-0000-0000-0000-00000000000a"
AGG_B = "b0000000-0000-0000-0000-00000000000b"
MISSING_AGG = "f0000000-0000-0000-0000-00000000000f"


def explain(query_string, version="1.39", **options):
    parsed = parse_request(QueryDict(query_string), Version.parse(version))
    return explainer.explain(parsed.query, **options)


def tree(result, name):
    return next(t for t in result["trees"] if t["root"]["name"] == name)


def provider(tree_, name):
    return next(p for p in tree_["providers"] if p["name"] == name)


def messages(found):
    return [r["message"] for r in found]


def kinds(found):
    return [r["kind"] for r in found]


@pytest.fixture
def cn():
    """cn (VCPU 16 with 14 used; MEMORY_MB with step/min/max units; CUSTOM_ROOT, in A)
    with cn-numa0 (VCPU 8, 7 used, AVX2) and cn-numa1 (VCPU 8 step 2, CUSTOM_X, in B)."""
    root = make_provider("cn", inventory={
        "VCPU": 16,
        "MEMORY_MB": {"total": 4096, "step_size": 256, "max_unit": 2048, "min_unit": 512}},
        traits=["CUSTOM_ROOT"], aggregates=[AGG_A])
    numa0 = make_provider("cn-numa0", parent=root, inventory={"VCPU": 8},
                          traits=["HW_CPU_X86_AVX2"])
    make_provider("cn-numa1", parent=root, inventory={"VCPU": {"total": 8, "step_size": 2}},
                  traits=["CUSTOM_X"], aggregates=[AGG_B])
    vm = make_consumer()
    allocate(vm, root, VCPU=14)
    allocate(vm, numa0, VCPU=7)
    return root


def test_a_tree_that_fits_says_so_and_counts_its_candidates(cn):
    result = explain("resources=VCPU:2")
    [found] = result["trees"]
    assert (found["fits"], found["candidates"], found["reasons"]) == (True, 2, [])
    assert result["fitting_trees"] == 1
    # why a provider of a fitting tree takes no part, with the numbers
    assert messages(provider(found, "cn-numa0")["reasons"]) == \
        ["VCPU: needs 2, free 1 (capacity 8, used 7)"]
    assert [p["depth"] for p in found["providers"]] == [0, 1, 1]
    assert provider(found, "cn-numa1")["parent_uuid"] == cn.uuid


def test_capacity_with_the_numbers(cn):
    found = explain("resources1=VCPU:4")["trees"][0]
    assert found["fits"] is True   # only cn-numa1 has 4 free
    reasons = provider(found, "cn")["reasons"]
    assert messages(reasons) == ["VCPU: needs 4, free 2 (capacity 16, used 14)"]
    assert reasons[0]["kind"] == "capacity" and reasons[0]["group"] == "1"
    assert reasons[0]["details"]["free"] == 2 and reasons[0]["details"]["used"] == 14

    found = explain("resources=VCPU:9")["trees"][0]
    assert found["fits"] is False
    assert messages(found["reasons"]) == [
        "VCPU:9: none of the 3 provider(s) with VCPU inventory can supply it"]
    assert kinds(found["reasons"]) == ["no_provider"]
    assert messages(provider(found, "cn")["reasons"]) == [
        "VCPU: needs 9, free 2 (capacity 16, used 14)"]
    assert messages(provider(found, "cn-numa1")["reasons"]) == [
        "VCPU: 9 is not a multiple of step_size 2"]
    assert kinds(provider(found, "cn-numa0")["reasons"]) == ["capacity"]


def test_units(cn):
    found = explain("resources=MEMORY_MB:3072")["trees"][0]
    assert messages(provider(found, "cn")["reasons"]) == ["MEMORY_MB: max_unit 2048 < 3072"]
    assert provider(found, "cn")["reasons"][0]["kind"] == "max_unit"
    found = explain("resources=MEMORY_MB:256")["trees"][0]
    assert messages(provider(found, "cn")["reasons"]) == ["MEMORY_MB: min_unit 512 > 256"]
    found = explain("resources=MEMORY_MB:600")["trees"][0]
    assert messages(provider(found, "cn")["reasons"]) == [
        "MEMORY_MB: 600 is not a multiple of step_size 256"]
    assert provider(found, "cn")["reasons"][0]["kind"] == "step_size"


def test_no_inventory_for_a_granular_group(cn):
    found = explain("resources1=MEMORY_MB:512,VCPU:4")["trees"][0]
    assert found["fits"] is False
    assert messages(provider(found, "cn-numa0")["reasons"]) == [
        "no inventory of MEMORY_MB", "VCPU: needs 4, free 1 (capacity 8, used 7)"]
    assert messages(provider(found, "cn")["reasons"]) == [
        "VCPU: needs 4, free 2 (capacity 16, used 14)"]
    assert kinds(provider(found, "cn-numa1")["reasons"]) == ["no_inventory"]


def test_missing_and_forbidden_traits(cn):
    found = explain("resources1=VCPU:2&required1=HW_CPU_X86_AVX2")["trees"][0]
    assert found["fits"] is False
    assert messages(provider(found, "cn")["reasons"]) == ["missing trait HW_CPU_X86_AVX2"]
    assert messages(provider(found, "cn-numa0")["reasons"]) == [
        "VCPU: needs 2, free 1 (capacity 8, used 7)"]
    found = explain("resources1=VCPU:2&required1=!CUSTOM_X")["trees"][0]
    assert messages(provider(found, "cn-numa1")["reasons"]) == ["has forbidden trait CUSTOM_X"]
    assert provider(found, "cn-numa1")["reasons"][0]["kind"] == "forbidden_trait"
    found = explain("resources1=VCPU:2&required1=in:HW_CPU_X86_AVX2,CUSTOM_ROOT")["trees"][0]
    assert found["fits"] is True


def test_traits_of_the_unsuffixed_group_count_only_on_the_providers_chosen(cn):
    # cn-numa0 has AVX2 but has too little VCPU free: the providers able to supply lack it
    found = explain("resources=VCPU:2&required=HW_CPU_X86_AVX2")["trees"][0]
    assert found["fits"] is False
    assert messages(found["reasons"]) == [
        "missing trait HW_CPU_X86_AVX2: no provider able to supply the group (cn, cn-numa1) "
        "has it"]
    assert kinds(found["reasons"]) == ["missing_trait"]
    found = explain("resources=VCPU:2&required=!CUSTOM_X")["trees"][0]
    assert found["fits"] is True
    assert messages(provider(found, "cn-numa1")["reasons"]) == ["has forbidden trait CUSTOM_X"]


def test_aggregates(cn):
    found = explain(f"resources1=VCPU:2&member_of1={AGG_B}")["trees"][0]
    assert found["fits"] is True
    assert messages(provider(found, "cn")["reasons"]) == [f"not in aggregate(s) {AGG_B}"]
    found = explain(f"resources1=VCPU:2&member_of1=!{AGG_B}")["trees"][0]
    assert messages(provider(found, "cn-numa1")["reasons"]) == [
        f"in forbidden aggregate(s) {AGG_B}"]
    # the unsuffixed group: an aggregate on the root spans its tree, one on a child not
    found = explain(f"resources=VCPU:2&member_of={AGG_A}")["trees"][0]
    assert found["fits"] is True
    found = explain(f"resources=VCPU:2,MEMORY_MB:512&member_of={AGG_B}")["trees"][0]
    assert found["fits"] is False
    assert messages(provider(found, "cn")["reasons"]) == [
        f"not in aggregate(s) {AGG_B} (nor is its root)"]
    assert "MEMORY_MB:512: none of the 1 provider(s) with MEMORY_MB inventory can supply it" \
        in messages(found["reasons"])
    found = explain(f"resources=VCPU:2&member_of=!{AGG_A}")["trees"][0]
    assert found["fits"] is False
    assert messages(found["reasons"])[0] == f"root in forbidden aggregate(s) {AGG_A}"


def test_in_tree(cn):
    other = make_provider("other", inventory={"VCPU": 4})
    result = explain(f"resources=VCPU:1&in_tree={other.uuid}")
    assert tree(result, "other")["fits"] is True
    assert messages(tree(result, "cn")["reasons"]) == [f"outside in_tree {other.uuid}"]
    assert tree(result, "cn")["reasons"][0]["kind"] == "in_tree"
    result = explain(f"resources1=VCPU:1&in_tree1={cn.uuid}")
    assert tree(result, "cn")["fits"] is True
    assert tree(result, "other")["reasons"][0]["message"] == f"outside in_tree {cn.uuid}"


def test_root_required(cn):
    make_provider("plain", inventory={"VCPU": 4})
    result = explain("resources=VCPU:1&root_required=CUSTOM_ROOT")
    assert tree(result, "cn")["fits"] is True
    assert messages(tree(result, "plain")["reasons"]) == ["root lacks required trait CUSTOM_ROOT"]
    assert tree(result, "plain")["reasons"][0]["kind"] == "root_required"
    result = explain("resources=VCPU:1&root_required=!CUSTOM_ROOT")
    assert messages(tree(result, "cn")["reasons"]) == ["root has forbidden trait CUSTOM_ROOT"]
    assert tree(result, "cn")["reasons"][0]["kind"] == "root_forbidden"
    assert tree(result, "plain")["fits"] is True


@pytest.fixture
def nics():
    """host -> nic1 -> pf1 (VF 4), pf2 (VF 4); host -> nic2 -> pf3 (VF 1)."""
    host = make_provider("host", inventory={"VCPU": 8})
    nic1 = make_provider("nic1", parent=host, traits=["CUSTOM_NIC"])
    nic2 = make_provider("nic2", parent=host, traits=["CUSTOM_NIC"])
    make_provider("pf1", parent=nic1, inventory={"SRIOV_NET_VF": 4}, traits=["CUSTOM_NET1"])
    make_provider("pf2", parent=nic1, inventory={"SRIOV_NET_VF": 4}, traits=["CUSTOM_NET1"])
    make_provider("pf3", parent=nic2, inventory={"SRIOV_NET_VF": 1}, traits=["CUSTOM_NET2"])
    return host


def test_group_policy_isolate(nics):
    query = ("resources1=SRIOV_NET_VF:1&required1=CUSTOM_NET2"
             "&resources2=SRIOV_NET_VF:1&required2=CUSTOM_NET2&group_policy={}")
    found = explain(query.format("isolate"))["trees"][0]
    assert found["fits"] is False
    assert messages(found["reasons"]) == [
        "group_policy=isolate: group 1 and group 2 would share provider pf3"]
    assert found["reasons"][0]["details"] == {"groups": ["1", "2"], "provider": "pf3"}
    # with none, the shared provider must hold both: pf3 has 1 VF
    found = explain(query.format("none"))["trees"][0]
    assert found["fits"] is False
    assert messages(found["reasons"]) == [
        "SRIOV_NET_VF on pf3: the groups together need 2, free 1 (capacity 1, used 0)"]


def test_same_subtree(nics):
    query = ("resources_A=SRIOV_NET_VF:1&required_A=CUSTOM_NET1"
             "&resources_B=SRIOV_NET_VF:1&required_B=CUSTOM_NET2"
             "&group_policy=none&same_subtree=_A,_B")
    found = explain(query)["trees"][0]
    assert found["fits"] is False
    assert messages(found["reasons"]) == [
        "same_subtree=_A,_B: providers pf1, pf3 are not in one subtree",
        "same_subtree=_A,_B: providers pf2, pf3 are not in one subtree"]
    assert set(kinds(found["reasons"])) == {"same_subtree"}
    # three suffixes: a NIC above both PFs
    query = ("resources_A=SRIOV_NET_VF:1&resources_B=SRIOV_NET_VF:1&required_N=CUSTOM_NIC"
             "&group_policy=isolate&same_subtree=_A,_B,_N")
    assert explain(query)["trees"][0]["fits"] is True


def test_no_candidate_on_a_wide_device_tree_is_explained_with_bounded_work(db, monkeypatch):
    """8 devices of capacity 1, 9 groups of one device each: 8 ** 9 (134 M) combinations,
    every one overfilling a device. The explanation counts them all, and is found by
    judging a few combinations and extending a few prefixes (search.refusals)."""
    host = make_provider("pci-host", inventory={"VCPU": 8})
    for i in range(8):
        make_provider(f"pci-host-dev{i}", parent=host, inventory={"CUSTOM_PCI_X": 1})
    judged, looked_at = [], []
    refusals = search.refusals

    def counted(plan, lists, judge, examples):
        return refusals(plan, [_Counted(partials, looked_at) for partials in lists],
                        lambda combo: judged.append(combo) or judge(combo), examples)
    monkeypatch.setattr(search, "refusals", counted)
    query = "&".join(f"resources_G{i}=CUSTOM_PCI_X:1" for i in range(9))
    found = explain(query + "&group_policy=none")["trees"][0]
    assert found["fits"] is False
    assert messages(found["reasons"]) == [
        f"CUSTOM_PCI_X on pci-host-dev0: the groups together need {n}, free 1 (capacity 1, "
        "used 0)" for n in (9, 8, 7)] + [
        f"… and {8 ** 9 - 3} more combination(s) refused for the same kind of reason"]
    # the examples judged, and the partials looked at: each group's once to sort the
    # devices into kinds, then a few per depth
    assert len(judged) == 50 and len(looked_at) <= 250


class _Counted(Counted):
    """Counted partials, noted also when iterated (the explainer iterates them)."""

    def __iter__(self):
        for index in range(len(self)):
            yield self[index]


def test_resourceless_group_without_a_positive_filter(nics):
    found = explain("resources1=VCPU:1&required2=!CUSTOM_NIC&group_policy=none"
                    "&same_subtree=1,2")["trees"][0]
    assert found["fits"] is False
    assert kinds(found["reasons"]) == ["resourceless_unfiltered"]
    assert found["reasons"][0]["group"] == "2"


def test_below_1_29_two_providers_of_one_tree(cn):
    # VCPU:4 only fits cn-numa1, MEMORY_MB is on cn
    found = explain("resources=VCPU:4,MEMORY_MB:512", version="1.28")["trees"][0]
    assert found["fits"] is False
    assert messages(found["reasons"]) == [
        "below microversion 1.29 a candidate may not use two providers of one tree "
        "(cn, cn-numa1)"]
    assert kinds(found["reasons"]) == ["same_tree"]
    assert explain("resources=VCPU:4,MEMORY_MB:512")["trees"][0]["fits"] is True


@pytest.fixture
def shared():
    """cn1 (VCPU, in A), cn2 (VCPU, no aggregate), disk: sharing DISK_GB in A."""
    cn1 = make_provider("cn1", inventory={"VCPU": 8}, aggregates=[AGG_A])
    cn2 = make_provider("cn2", inventory={"VCPU": 8})
    disk = make_provider("disk", inventory={"DISK_GB": 100},
                         traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[AGG_A])
    return cn1, cn2, disk


def test_sharing_providers(shared):
    result = explain("resources=VCPU:1,DISK_GB:10")
    assert tree(result, "cn1")["fits"] is True
    cn2 = tree(result, "cn2")
    assert cn2["fits"] is False
    assert messages(cn2["reasons"]) == ["DISK_GB:10: no provider here has DISK_GB inventory"]
    # the disk tree has no VCPU of its own, but its provider serves cn1's candidates
    disk = tree(result, "disk")
    assert disk["fits"] is True and disk["candidates"] == 0
    assert [t["name"] for t in disk["shared_with"]] == ["cn1"]
    # the sharing provider, seen from cn1's tree, when it cannot serve
    cn1 = tree(explain("resources=VCPU:1,DISK_GB:200"), "cn1")
    assert cn1["fits"] is False
    assert provider(cn1, "disk")["foreign"] is True
    assert messages(provider(cn1, "disk")["reasons"]) == [
        "DISK_GB: needs 200, free 100 (capacity 100, used 0)"]


def test_a_tree_served_only_by_another_trees_sharing_provider(shared):
    result = explain("resources=DISK_GB:10")
    cn1 = tree(result, "cn1")
    assert cn1["fits"] is False and cn1["candidates"] == 1
    assert messages(cn1["reasons"]) == [
        "every candidate built around this tree takes all its resources from sharing "
        "providers of other trees (disk)"]
    assert tree(result, "disk")["fits"] is True


def test_sharing_provider_found_in_trees_of_another_page(shared):
    # one tree per page: the disk's page must look at cn1's candidates
    result = explain("resources=VCPU:1,DISK_GB:10", tree="disk")
    assert [t["root"]["name"] for t in result["trees"]] == ["disk"]
    assert result["trees"][0]["fits"] is True
    assert [t["name"] for t in result["trees"][0]["shared_with"]] == ["cn1"]
    result = explain("resources=VCPU:1,DISK_GB:1000", tree="disk")
    assert result["trees"][0]["fits"] is False


def test_a_step_that_stops_everything_is_said_once(cn):
    result = explain(f"resources=VCPU:1&member_of={MISSING_AGG}")
    assert result["trees"] == []
    assert kinds(result["reasons"]) == ["stopped"]
    assert "member_of: no aggregate of a clause exists" in result["reasons"][0]["message"]


def test_unknown_names_are_refused_like_the_api(cn):
    with pytest.raises(InvalidCandidatesQuery, match="No such resource class NOPE"):
        explain("resources=NOPE:1")
    with pytest.raises(InvalidCandidatesQuery, match=r"No such trait\(s\): CUSTOM_NOPE"):
        explain("resources=VCPU:1&required=CUSTOM_NOPE")
    with pytest.raises(explainer.UnknownTree):
        explain("resources=VCPU:1", tree="nowhere")


def test_limit_is_noted_and_ignored(cn):
    result = explain("resources=VCPU:1&limit=1")
    assert kinds(result["reasons"]) == ["limit"]
    assert result["trees"][0]["candidates"] == 2
    result = explain("resources=VCPU:1", max_candidates=1)
    assert result["reasons"][0]["details"] == {"max_allocation_candidates": 1}


def test_pages_of_trees(db):
    for index in range(5):
        make_provider(f"host{index}", inventory={"VCPU": index + 1})
    result = explain("resources=VCPU:3", per_page=2, page=2)
    assert result["page"] == {"number": 2, "per_page": 2, "pages": 3, "trees": 5}
    assert [t["root"]["name"] for t in result["trees"]] == ["host2", "host3"]
    assert [t["fits"] for t in result["trees"]] == [True, True]
    assert explain("resources=VCPU:3", per_page=2)["fitting_trees"] == 0
    assert explain("resources=VCPU:3", per_page=2, page=99)["page"]["number"] == 3
    one = explain("resources=VCPU:3", tree="host4")
    assert [t["root"]["name"] for t in one["trees"]] == ["host4"]


def test_a_page_is_a_constant_number_of_queries(db, django_assert_max_num_queries):
    def build(count):
        for index in range(count):
            root = make_provider(f"h{count}-{index}", inventory={"VCPU": 2},
                                 aggregates=[AGG_A])
            make_provider(f"h{count}-{index}-numa", parent=root, inventory={"MEMORY_MB": 64},
                          traits=["CUSTOM_X"])
        make_provider(f"disk{count}", inventory={"DISK_GB": 10},
                      traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[AGG_A])

    # nothing fits (memory only on CUSTOM_X providers): the disk trees of the page are
    # looked for in the candidates of the trees of other pages (one more batch of facts)
    query = "resources=VCPU:1,MEMORY_MB:32,DISK_GB:1&required=!CUSTOM_X"
    build(6)
    with django_assert_max_num_queries(22) as small:
        result = explain(query, per_page=5)
    assert result["fitting_trees"] == 0
    build(40)
    with django_assert_max_num_queries(len(small.captured_queries)):
        result = explain(query, per_page=5)
    assert [t["root"]["name"] for t in result["trees"]][:2] == ["disk40", "disk6"]


def test_the_explainer_leaves_no_cycle_for_the_collector(cn):
    """The page keeps its trees and a tree its page: held as a cycle, everything the
    page read (facts, partial candidates) outlived the answer until the cyclic
    collector's next pass, which then walked it (90,000 objects a request on bench ui's
    cloud); the UI pauses the collector around these pages."""
    import gc

    from candidates.explain.page import Page, Tree

    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = explain("resources=VCPU:64", cloud=True)
        assert result["cloud"]["fitting_trees"] == 0
        del result
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, (Page, Tree))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []
