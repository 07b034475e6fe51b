"""A limited request on a cloud filled from its lowest root ids: the batches skip the
trees with no room for the request (capacity.first_root_with_room) and the answer is
the one the batches would give reading every tree."""
from functools import partial

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from candidates.engine import batches as engine_batches
from candidates.sql import capacity
from providers.models import ResourceClass, ResourceProvider
from tests.candidates import helpers
from tests.factories import allocate, make_consumer, make_provider, set_inventory

get_candidates = partial(helpers.get_candidates, version="1.39")


@pytest.fixture
def filling_cloud(db, monkeypatch):
    """CN00-CN11, each a compute node with NUMA0 (VCPU 2, MEMORY_MB 1024) under it:
    CN00-CN07 have no VCPU left (allocated, or all reserved), CN08-CN11 have room.
    First batches of 2 root ids, so a limited request walks several."""
    monkeypatch.setattr(engine_batches, "FIRST_BATCH_ROOT_IDS", 2)
    for i in range(12):
        cn = make_provider(f"CN{i:02}", inventory={"DISK_GB": 100})
        numa = make_provider(f"NUMA{i:02}", parent=cn,
                             inventory={"VCPU": 2, "MEMORY_MB": 1024})
        if i < 4:
            allocate(make_consumer(), numa, VCPU=2)
        elif i < 8:
            set_inventory(numa, {"VCPU": {"total": 2, "reserved": 2}, "MEMORY_MB": 1024})


QUERIES = ["resources=VCPU:1,DISK_GB:1",
           "resources=DISK_GB:1&resources1=VCPU:1,MEMORY_MB:512&group_policy=none",
           "resources1=VCPU:1&resources2=DISK_GB:5&group_policy=isolate"]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5])
def test_a_limit_skips_the_full_trees_and_keeps_the_answer(api, filling_cloud, monkeypatch,
                                                            query, limit, provider_lookup):
    full = _in_order(api, query)
    assert len(full) == 4
    with CaptureQueriesContext(connection) as skipping:
        assert _in_order(api, f"{query}&limit={limit}") == full[:limit]
    monkeypatch.setattr(engine_batches, "_room_finder", lambda evaluation: None)
    with CaptureQueriesContext(connection) as walking:
        assert _in_order(api, f"{query}&limit={limit}") == full[:limit]
    # (with the snapshot, batches of full trees read one statement each). The walk's
    # batches span limit, 2 x limit, ... trees: up to a limit of 3 it needs a third
    # batch to reach the candidates; from 4 on, two batches reach the last tree and
    # finding CN08 first saves no statement.
    if provider_lookup != "snapshot" and limit <= 3:
        # one statement found CN08, where the walk read batches of full trees
        assert len(skipping.captured_queries) < len(walking.captured_queries)


def test_no_tree_with_room_ends_the_walk(api, filling_cloud):
    assert get_candidates(api, "resources=VCPU:2,DISK_GB:1&limit=1") == [
        "CN08(DISK_GB:1)+NUMA08(VCPU:2)"]
    assert get_candidates(api, "resources=VCPU:3&limit=1") == []


def _in_order(api, query):
    """The candidates' providers, in the answer's order."""
    names = dict(ResourceProvider.objects.values_list("uuid", "name"))
    response = api.get("/allocation_candidates?" + query, version="1.39")
    assert response.status_code == 200, response.content
    return ["+".join(sorted(names[u] for u in request["allocations"]))
            for request in response.json()["allocation_requests"]]


# --- the query against the rule it stands for ---------------------------------------------


@pytest.fixture
def trees(db):
    """Roots R0-R5; where the room is: R0 none, R1 VCPU on a child, R2 VCPU and MEMORY_MB
    on two children, R3 VCPU at a ratio, (4 - 1 reserved) * 1.5 = 4.5 with 3 used, R4
    MEMORY_MB only, R5 exactly full."""
    def root(name, **children):
        node = make_provider(name)
        for child, inventory in children.items():
            make_provider(f"{name}.{child}", parent=node, inventory=inventory)
        return node

    r = [root("R0")]
    r.append(root("R1", numa={"VCPU": 4}))
    r.append(root("R2", numa={"VCPU": 2}, mem={"MEMORY_MB": 2048}))
    r.append(root("R3", numa={"VCPU": {"total": 4, "reserved": 1, "allocation_ratio": 1.5}}))
    allocate(make_consumer(), ResourceProvider.objects.get(name="R3.numa"), VCPU=3)
    r.append(root("R4", mem={"MEMORY_MB": 2048}))
    r.append(root("R5", numa={"VCPU": 2}))
    allocate(make_consumer(), ResourceProvider.objects.get(name="R5.numa"), VCPU=2)
    return [node.id for node in r]


@pytest.mark.parametrize("amounts,with_room", [
    ({"VCPU": 1}, [1, 2, 3]),
    ({"VCPU": 2}, [1, 2]),          # R3 has 1.5 left
    ({"VCPU": 1, "MEMORY_MB": 512}, [2]),
    ({"MEMORY_MB": 2048}, [2, 4]),
    ({"MEMORY_MB": 2049}, []),
])
def test_first_root_with_room(trees, amounts, with_room):
    classes = dict(ResourceClass.objects.values_list("name", "id"))
    wanted = [(classes[name], n) for name, n in amounts.items()]
    for start_index, start in enumerate(trees):
        expected = next((trees[i] for i in with_room if i >= start_index), None)
        assert capacity.first_root_with_room(start, wanted) == expected
