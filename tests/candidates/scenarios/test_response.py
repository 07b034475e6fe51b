"""§5 response shapes per microversion, limit, randomisation, headers."""
import pytest

from providers.models import ResourceProvider
from tests.candidates.helpers import describe, get_candidates, summary_names
from tests.factories import allocate, make_consumer, make_provider

U = {
    "root": "be99627d-e848-44ef-8341-683e2e557c58",
    "numa": "9a9c6b0f-e8d1-4d16-b053-a2bfe8a76757",
    "nic": "ba415f98-1960-4488-b2ed-4518b77eaa60",
    "pf1": "92e971c9-777a-48bf-a181-a2ca1105c015",
    "pf2": "cefbdf54-05a8-4db4-ad2b-d6729e5a4de8",
}
BW = "NET_BW_EGR_KILOBIT_PER_SEC"


@pytest.fixture
def example(db):
    root = make_provider("root", uuid=U["root"], traits=["COMPUTE_VOLUME_MULTI_ATTACH"])
    make_provider("numa", uuid=U["numa"], parent=root, inventory={"VCPU": 4, "MEMORY_MB": 2048},
                  traits=["HW_NUMA_ROOT", "CUSTOM_FOO"])
    nic = make_provider("nic", uuid=U["nic"], parent=root, traits=["CUSTOM_VNIC_TYPE_DIRECT"])
    make_provider("pf1", uuid=U["pf1"], parent=nic, inventory={BW: 10000},
                  traits=["CUSTOM_PHYSNET1"])
    make_provider("pf2", uuid=U["pf2"], parent=nic, inventory={BW: 20000},
                  traits=["CUSTOM_PHYSNET2"])


FULL = (f"resources=VCPU:1&resources_NET1={BW}:10&required_NET1=CUSTOM_PHYSNET1"
        f"&resources_NET2={BW}:20&required_NET2=CUSTOM_PHYSNET2&group_policy=isolate")


def _sorted_traits(body):
    for summary in body["provider_summaries"].values():
        summary["traits"] = sorted(summary["traits"])
    return body


def test_full_example_1_34(api, example):
    response = api.get("/allocation_candidates?" + FULL, version="1.34")
    assert response.status_code == 200
    assert _sorted_traits(response.json()) == {
        "allocation_requests": [{
            "allocations": {
                U["numa"]: {"resources": {"VCPU": 1}},
                U["pf1"]: {"resources": {BW: 10}},
                U["pf2"]: {"resources": {BW: 20}},
            },
            "mappings": {"": [U["numa"]], "_NET1": [U["pf1"]], "_NET2": [U["pf2"]]},
        }],
        "provider_summaries": {
            U["root"]: {"resources": {}, "traits": ["COMPUTE_VOLUME_MULTI_ATTACH"],
                        "parent_provider_uuid": None, "root_provider_uuid": U["root"]},
            U["numa"]: {"resources": {"VCPU": {"capacity": 4, "used": 0},
                                      "MEMORY_MB": {"capacity": 2048, "used": 0}},
                        "traits": ["CUSTOM_FOO", "HW_NUMA_ROOT"],
                        "parent_provider_uuid": U["root"], "root_provider_uuid": U["root"]},
            U["nic"]: {"resources": {}, "traits": ["CUSTOM_VNIC_TYPE_DIRECT"],
                       "parent_provider_uuid": U["root"], "root_provider_uuid": U["root"]},
            U["pf1"]: {"resources": {BW: {"capacity": 10000, "used": 0}},
                       "traits": ["CUSTOM_PHYSNET1"],
                       "parent_provider_uuid": U["nic"], "root_provider_uuid": U["root"]},
            U["pf2"]: {"resources": {BW: {"capacity": 20000, "used": 0}},
                       "traits": ["CUSTOM_PHYSNET2"],
                       "parent_provider_uuid": U["nic"], "root_provider_uuid": U["root"]},
        },
    }
    assert response["Cache-Control"] == "no-cache"
    assert response["Last-Modified"].endswith(" GMT")


def test_string_suffixes_need_1_33(api, example):
    assert api.get("/allocation_candidates?" + FULL, version="1.26").status_code == 400


def test_1_33_has_no_mappings(api, example):
    body = api.get("/allocation_candidates?" + FULL, version="1.33").json()
    assert "mappings" not in body["allocation_requests"][0]


def test_1_10_list_form_and_requested_classes_only(api, example):
    response = api.get("/allocation_candidates?resources=VCPU:1,MEMORY_MB:64", version="1.10")
    assert response.json() == {
        "allocation_requests": [{"allocations": [
            {"resource_provider": {"uuid": U["numa"]},
             "resources": {"VCPU": 1, "MEMORY_MB": 64}}]}],
        "provider_summaries": {U["numa"]: {"resources": {
            "VCPU": {"capacity": 4, "used": 0}, "MEMORY_MB": {"capacity": 2048, "used": 0}}}},
    }
    assert "Cache-Control" not in response
    assert "Last-Modified" not in response


def test_1_12_dict_form_1_15_headers(api, example):
    response = api.get("/allocation_candidates?resources=VCPU:1", version="1.12")
    assert response.json()["allocation_requests"] == [
        {"allocations": {U["numa"]: {"resources": {"VCPU": 1}}}}]
    assert "Cache-Control" not in response
    response = api.get("/allocation_candidates?resources=VCPU:1", version="1.15")
    assert response["Cache-Control"] == "no-cache"


def test_summary_fields_per_version(api, example):
    def summary(version):
        body = api.get("/allocation_candidates?resources=VCPU:1", version=version).json()
        return body["provider_summaries"]

    assert summary("1.16") == {U["numa"]: {"resources": {"VCPU": {"capacity": 4, "used": 0}}}}
    s = summary("1.17")[U["numa"]]
    assert sorted(s["traits"]) == ["CUSTOM_FOO", "HW_NUMA_ROOT"]
    assert set(s["resources"]) == {"VCPU"}
    s = summary("1.27")[U["numa"]]
    assert set(s["resources"]) == {"VCPU", "MEMORY_MB"}
    assert "parent_provider_uuid" not in s
    assert list(summary("1.28")) == [U["numa"]]
    s = summary("1.29")
    assert set(s) == set(U.values())
    assert s[U["numa"]]["parent_provider_uuid"] == U["root"]
    assert s[U["root"]]["root_provider_uuid"] == U["root"]


def test_used_is_current_usage(api, example, db):
    allocate(make_consumer(), ResourceProvider.objects.get(uuid=U["numa"]), VCPU=3)
    body = api.get("/allocation_candidates?resources=VCPU:1").json()
    assert body["provider_summaries"][U["numa"]]["resources"]["VCPU"] == {"capacity": 4,
                                                                          "used": 3}
    assert api.get("/allocation_candidates?resources=VCPU:2").json() == {
        "allocation_requests": [], "provider_summaries": {}}


def test_capacity_is_truncated(api, db):
    make_provider("cn", inventory={"VCPU": {"total": 3, "reserved": 1, "allocation_ratio": 1.5}})
    body = api.get("/allocation_candidates?resources=VCPU:3").json()
    [summary] = body["provider_summaries"].values()
    assert summary["resources"]["VCPU"] == {"capacity": 3, "used": 0}
    assert api.get("/allocation_candidates?resources=VCPU:4").json()["allocation_requests"] == []


def test_min_max_step(api, db):
    make_provider("cn", inventory={"VCPU": {"total": 16, "min_unit": 2, "max_unit": 8,
                                            "step_size": 2}})
    for amount, ok in ((1, False), (2, True), (3, False), (8, True), (10, False)):
        got = get_candidates(api, f"resources=VCPU:{amount}")
        assert bool(got) is ok, amount


@pytest.fixture
def many(db):
    for i in range(20):
        cn = make_provider(f"cn{i:02}", inventory={"VCPU": 4})
        make_provider(f"child{i:02}", parent=cn, inventory={"MEMORY_MB": 1024})


def test_limit_keeps_first_and_reduces_summaries(api, many):
    full = api.get("/allocation_candidates?resources=VCPU:1").json()
    assert len(full["allocation_requests"]) == 20
    assert len(full["provider_summaries"]) == 40
    body = api.get("/allocation_candidates?resources=VCPU:1&limit=3").json()
    assert body["allocation_requests"] == full["allocation_requests"][:3]
    assert len(body["provider_summaries"]) == 6
    again = api.get("/allocation_candidates?resources=VCPU:1&limit=3").json()
    assert again == body


def test_limit_first_occurrence_wins(api, many):
    body = api.get("/allocation_candidates?resources=VCPU:1&limit=2&limit=5").json()
    assert len(body["allocation_requests"]) == 2


def test_max_allocation_candidates(api, many, settings):
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 4
    body = api.get("/allocation_candidates?resources=VCPU:1").json()
    assert len(body["allocation_requests"]) == 4
    body = api.get("/allocation_candidates?resources=VCPU:1&limit=2").json()
    assert len(body["allocation_requests"]) == 2


def test_randomize(api, many, settings):
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = True
    full = describe(api.get("/allocation_candidates?resources=VCPU:1").json())
    assert len(full) == 20
    seen = set()
    for _ in range(10):
        body = api.get("/allocation_candidates?resources=VCPU:1&limit=2").json()
        got = describe(body)
        assert len(got) == 2 and set(got) <= set(full)
        assert len(body["provider_summaries"]) == 4
        seen.update(got)
    assert len(seen) > 2   # a random sample, not always the first two


def test_pre_1_29_keeps_sharing_from_other_tree(api, db):
    agg = "a0000000-0000-0000-0000-00000000000a"
    cn = make_provider("CN", inventory={"VCPU": 4}, aggregates=[agg])
    make_provider("child", parent=cn, inventory={"VCPU": 4})
    make_provider("SS", inventory={"DISK_GB": 100}, aggregates=[agg],
                  traits=["MISC_SHARES_VIA_AGGREGATE"])
    assert get_candidates(api, "resources=VCPU:1,DISK_GB:10", version="1.28") == [
        "CN(VCPU:1)+SS(DISK_GB:10)", "SS(DISK_GB:10)+child(VCPU:1)"]


@pytest.fixture
def tree_and_host(db):
    cn = make_provider("CN", inventory={"VCPU": 4}, traits=["CUSTOM_ROOT"])
    make_provider("N0", parent=cn, inventory={"VCPU": 4, "MEMORY_MB": 64})
    make_provider("N1", parent=cn, inventory={"VCPU": 4})
    make_provider("NOVCPU", parent=cn, inventory={"MEMORY_MB": 64})
    make_provider("CN2", inventory={"VCPU": 4})


@pytest.mark.parametrize("randomize", [False, True])
def test_limit_before_1_29_keeps_summaries_of_candidates_in_kept_trees(
        api, tree_and_host, settings, randomize):
    """§4.7: below 1.29 the limited summaries are the providers in allocations of any
    candidate whose root is the root of a kept candidate's provider."""
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = randomize
    assert get_candidates(api, "resources=VCPU:1", version="1.28") == [
        "CN(VCPU:1)", "CN2(VCPU:1)", "N0(VCPU:1)", "N1(VCPU:1)"]
    for limit in (1, 2, 3) * (4 if randomize else 1):
        body = api.get(f"/allocation_candidates?resources=VCPU:1&limit={limit}",
                       version="1.17").json()
        kept = describe(body)
        assert len(kept) == limit
        expected = set()
        for candidate in kept:
            expected |= {"CN2"} if candidate.startswith("CN2(") else {"CN", "N0", "N1"}
        assert summary_names(body) == sorted(expected)
        for summary in body["provider_summaries"].values():
            assert list(summary["resources"]) == ["VCPU"]


def test_summaries_below_1_27_show_classes_requested_by_any_group(api, db):
    make_provider("cn1", inventory={"VCPU": 4, "MEMORY_MB": 64, "DISK_GB": 10})
    make_provider("cn2", inventory={"VCPU": 4, "DISK_GB": 10})
    query = "resources1=VCPU:1&resources2=DISK_GB:1&group_policy=isolate"
    assert api.get(f"/allocation_candidates?{query}", version="1.26").json()[
        "allocation_requests"] == []
    body = api.get("/allocation_candidates?resources1=VCPU:1&resources2=MEMORY_MB:1"
                   "&group_policy=none", version="1.26").json()
    assert describe(body) == ["cn1(MEMORY_MB:1,VCPU:1)"]
    [summary] = body["provider_summaries"].values()
    assert set(summary["resources"]) == {"VCPU", "MEMORY_MB"}
    body = api.get("/allocation_candidates?resources=DISK_GB:1&resources1=VCPU:1",
                   version="1.26").json()
    assert len(body["allocation_requests"]) == 2
    for summary in body["provider_summaries"].values():
        assert set(summary["resources"]) == {"VCPU", "DISK_GB"}
        assert "parent_provider_uuid" not in summary
    body = api.get("/allocation_candidates?resources=DISK_GB:1&resources1=VCPU:1",
                   version="1.27").json()
    assert {name for s in body["provider_summaries"].values() for name in s["resources"]} == {
        "VCPU", "MEMORY_MB", "DISK_GB"}


@pytest.mark.parametrize("strategy,expected", [
    ("depth-first", ["t0", "t0-a", "t0-b", "t1"]),
    ("breadth-first", ["t0", "t1", "t2", "t0-a"]),
])
def test_generation_strategy_with_max_candidates(api, db, settings, strategy, expected):
    for t in range(3):
        root = make_provider(f"t{t}", inventory={"VCPU": 4})
        for leaf in "ab":
            make_provider(f"t{t}-{leaf}", parent=root, inventory={"VCPU": 4})
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 4
    settings.PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY = strategy
    body = api.get("/allocation_candidates?resources=VCPU:1").json()
    names = dict(ResourceProvider.objects.values_list("uuid", "name"))
    assert [names[next(iter(request["allocations"]))]
            for request in body["allocation_requests"]] == expected
    # limit applies to what the strategy generated
    body = api.get("/allocation_candidates?resources=VCPU:1&limit=2").json()
    assert [names[next(iter(request["allocations"]))]
            for request in body["allocation_requests"]] == expected[:2]
