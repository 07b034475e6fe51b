"""Wide, symmetric device trees (issue 42): PCI devices in Placement, one provider of
capacity 1 per device and one granular group per device; vGPUs on physical GPUs.

The answer is every distinct mappings (Quirk Q3), in the order of the plain product of
the groups' partials (hosts by id, then the first group's device, then the second's, ...);
max_allocation_candidates and the generation strategy cut that order as Placement
documents: depth-first takes a host's candidates before the next host's, breadth-first
one candidate of each host in turn."""
from itertools import permutations

import pytest

from candidates import combine
from providers.models import ResourceProvider
from tests.factories import allocate, make_consumer, make_provider

PCI = "CUSTOM_PCI_10DE_20B5"


@pytest.fixture(autouse=True, params=["searched", "as served"])
def searched(request, monkeypatch):
    """These trees are small: their products would be judged whole, not searched."""
    if request.param == "searched":
        monkeypatch.setattr(combine, "JUDGED_WHOLE_UP_TO", 0)


@pytest.fixture
def hosts(db):
    """Three hosts of three devices each, the third host's first device in use."""
    made = []
    for h in range(3):
        host = make_provider(f"h{h}", inventory={"VCPU": 8})
        made.append([make_provider(f"h{h}-d{d}", parent=host, inventory={PCI: 1},
                                   traits=["CUSTOM_GPU_A" if d % 2 else "CUSTOM_GPU_B"])
                     for d in range(3)])
    allocate(make_consumer(), made[2][0], **{PCI: 1})
    return made


def _query(groups, policy="none", extra=""):
    return "&".join([f"resources_G{i}={PCI}:1" for i in range(groups)]
                    + [f"group_policy={policy}"]) + extra


def _mappings(api, query):
    body = api.get("/allocation_candidates?" + query, version="1.36").json()
    names = dict(ResourceProvider.objects.values_list("uuid", "name"))
    return [tuple(names[request["mappings"][f"_G{i}"][0]]
                  for i in range(len(request["mappings"])))
            for request in body["allocation_requests"]]


def _every_arrangement(host, devices, groups):
    return [tuple(f"h{host}-d{d}" for d in order) for order in permutations(devices, groups)]


@pytest.mark.parametrize("policy", ["none", "isolate"])
def test_every_distinct_mapping_in_the_products_order(api, hosts, policy):
    # the third host's first device is in use
    assert _mappings(api, _query(2, policy)) == (
        _every_arrangement(0, range(3), 2) + _every_arrangement(1, range(3), 2)
        + _every_arrangement(2, (1, 2), 2))
    assert _mappings(api, _query(3, policy)) == (
        _every_arrangement(0, range(3), 3) + _every_arrangement(1, range(3), 3))
    assert _mappings(api, _query(1, policy)) == [
        ("h0-d0",), ("h0-d1",), ("h0-d2",), ("h1-d0",), ("h1-d1",), ("h1-d2",),
        ("h2-d1",), ("h2-d2",)]


def test_more_groups_than_devices_finds_nothing(api, hosts):
    assert _mappings(api, _query(4)) == []


def test_required_traits_per_group(api, hosts):
    query = _query(2, extra="&required_G0=CUSTOM_GPU_B&required_G1=CUSTOM_GPU_B")
    # only d0 and d2 have GPU_B: each group one of them, never both on one device
    assert _mappings(api, query) == [("h0-d0", "h0-d2"), ("h0-d2", "h0-d0"),
                                     ("h1-d0", "h1-d2"), ("h1-d2", "h1-d0")]


def test_limit_cuts_the_same_order(api, hosts):
    whole = _mappings(api, _query(2))
    for limit in (1, 5, 7, 13):
        assert _mappings(api, _query(2, extra=f"&limit={limit}")) == whole[:limit]


@pytest.mark.parametrize("strategy", ["depth-first", "breadth-first"])
def test_max_allocation_candidates_and_the_generation_strategy(api, hosts, settings,
                                                               strategy):
    settings.PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY = strategy
    whole = _mappings(api, _query(2))
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 4
    found = _mappings(api, _query(2))
    if strategy == "depth-first":
        assert found == whole[:4]   # the first host's first four
    else:
        first, second = _every_arrangement(0, range(3), 2), _every_arrangement(1, range(3), 2)
        third = _every_arrangement(2, (1, 2), 2)
        # one of each host in turn
        assert found == [first[0], second[0], third[0], first[1]]
    assert _mappings(api, _query(2, extra="&limit=3")) == found[:3]


def test_vgpus_sum_on_a_physical_gpu_up_to_its_max_unit(api, db):
    host = make_provider("host", inventory={"VCPU": 8})
    for g in range(2):
        make_provider(f"pgpu{g}", parent=host, inventory={"VGPU": {"total": 4, "max_unit": 2}})
    found = _mappings(api, "&".join(f"resources_G{i}=VGPU:1" for i in range(3))
                      + "&group_policy=none")
    # three groups of one VGPU on two pGPUs, at most two on one (max_unit)
    assert found == [order for order in
                     [(a, b, c) for a in ("pgpu0", "pgpu1") for b in ("pgpu0", "pgpu1")
                      for c in ("pgpu0", "pgpu1")]
                     if max(order.count("pgpu0"), order.count("pgpu1")) <= 2]
