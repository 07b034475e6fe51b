"""Two API nodes (separate gunicorn masters, as on separate machines) on one primary,
both through pgbouncer in transaction-pooling mode, one keeping its connections
(CONN_MAX_AGE 60) and one not (0); replica reads also go through pgbouncer. The
allocation race and tree re-parenting stay exact across the nodes."""
import time
import uuid as uuidlib
from collections import defaultdict

import pytest

from tests.allocations.test_concurrency import run_threads
from tests.scaling.conftest import Node
from tests.scaling.test_replicas import candidates, claim, make_provider


@pytest.fixture(scope="module")
def nodes(bouncer):
    common = {"DATABASE_URL": bouncer.url("primary", via_bouncer=True),
              "DATABASE_REPLICA_URLS": bouncer.url("standby", via_bouncer=True),
              "DATABASE_REPLICA_MAX_LAG": 3600}
    first = Node(bouncer, "node-a", workers=2, DATABASE_CONN_MAX_AGE=60, **common)
    second = Node(bouncer, "node-b", workers=2, DATABASE_CONN_MAX_AGE=0, **common)
    yield first, second
    first.stop()
    second.stop()


def test_the_allocation_race_across_nodes_accepts_exactly_what_fits(bouncer, nodes):
    hot = make_provider(nodes[0], "race-hot", vcpu=40)
    assert claim(nodes[1], hot, vcpu=32)[0] == 204  # 8 VCPU free: 4 claims of 2 fit
    fit, writers, claims_each = 4, 8, 2

    def writer(index):
        node = nodes[index % 2]
        accepted = rejected = 0
        for _ in range(claims_each):
            for _attempt in range(30):  # retry only "try again" conflicts, like a client
                status, body = claim(node, hot, vcpu=2)
                if status == 409 and body["errors"][0]["code"] == "placement.concurrent_update":
                    continue
                break
            assert status in (204, 409), body
            if status == 204:
                accepted += 1
            else:
                assert "would exceed the capacity" in body["errors"][0]["detail"]
                rejected += 1
        return accepted, rejected

    results = run_threads(writers, writer)
    assert sum(a for a, _ in results) == fit
    assert sum(r for _, r in results) == writers * claims_each - fit
    status, body = nodes[0].call("GET", f"/resource_providers/{hot}/usages")
    assert (status, body["usages"]) == (200, {"VCPU": 40})
    status, body = nodes[1].call("GET", f"/resource_providers/{hot}")
    assert body["generation"] == 1 + 1 + fit  # inventory, the filler, each accepted claim
    # Candidates read the standby through pgbouncer: once replayed, the full provider
    # is no candidate any more.
    bouncer.wait_replayed()
    time.sleep(1.1)
    assert hot not in candidates(nodes[0]) and hot not in candidates(nodes[1])
    transactions = bouncer.bouncer_transactions()
    assert transactions["placement"] > 0 and transactions["placement_ro"] > 0


def tree_problems(cluster):
    """Every way the stored nested sets and root ids disagree with the parent links."""
    rows = cluster.query("primary", "SELECT id, parent_id, root_id, tree_id, lft, rght, "
                                    "level FROM resource_providers")
    by_id = {row[0]: row for row in rows}
    problems, trees = [], defaultdict(list)
    for pk, parent, root, tree, lft, rght, level in rows:
        trees[tree].append((lft, rght))
        if parent is None:
            if (root, lft, level) != (pk, 1, 0):
                problems.append(("bad root", pk))
            continue
        _, _, p_root, p_tree, p_lft, p_rght, p_level = by_id[parent]
        if not (p_tree == tree and p_lft < lft < rght < p_rght and level == p_level + 1
                and root == p_root):
            problems.append(("bad child", pk))
    for tree, bounds in trees.items():
        numbers = sorted(n for pair in bounds for n in pair)
        if numbers != list(range(1, 2 * len(bounds) + 1)):
            problems.append(("bad numbering", tree))
    return problems


def test_re_parenting_across_nodes_keeps_the_trees_exact(bouncer, nodes):
    roots = [make_provider(nodes[0], f"tree-root-{i}") for i in range(3)]
    children = []
    for i in range(6):
        uuid = str(uuidlib.uuid4())
        status, _ = nodes[1].call("POST", "/resource_providers", {
            "name": f"tree-child-{i}", "uuid": uuid, "parent_provider_uuid": roots[0]})
        assert status == 200
        children.append(uuid)
    moves = 4

    def mover(index):
        node = nodes[index % 2]
        status, _ = node.call("POST", "/resource_providers", {
            "name": f"tree-grandchild-{index}", "uuid": str(uuidlib.uuid4()),
            "parent_provider_uuid": children[index]})
        assert status == 200
        for move in range(moves):
            status, body = node.call("PUT", f"/resource_providers/{children[index]}", {
                "name": f"tree-child-{index}",
                "parent_provider_uuid": roots[(index + move + 1) % 3]})
            assert status == 200, body

    run_threads(len(children), mover)
    assert tree_problems(bouncer) == []
    bouncer.wait_replayed()
    time.sleep(1.1)
    for position, root in enumerate(roots):
        status, body = nodes[position % 2].call("GET", f"/resource_providers?in_tree={root}")
        expected = {children[i] for i in range(6) if (i + moves) % 3 == position}
        in_tree = {rp["uuid"] for rp in body["resource_providers"]}
        assert status == 200 and expected | {root} <= in_tree
        assert len(in_tree) == 1 + 2 * len(expected)  # each child with its grandchild


def test_a_topology_change_through_one_node_reaches_the_snapshots_of_the_other(bouncer,
                                                                                nodes):
    """Each worker answers candidates from its snapshot of the topology once settled; a
    change made through another node moves the token, so the next answer after the
    change has replayed shows it."""
    writer, reader = nodes
    host = make_provider(writer, "topology-host")
    assert writer.call("PUT", "/traits/CUSTOM_TOPOLOGY")[0] == 201
    query = "/allocation_candidates?resources=VCPU:1&required=CUSTOM_TOPOLOGY"

    def found():
        status, body = reader.call("GET", query)
        assert status == 200, body
        return set(body["provider_summaries"])

    bouncer.wait_replayed()
    assert found() == set()
    time.sleep(1.1)   # the token settles: the reader's workers load their snapshots
    for _ in range(6):
        assert found() == set()
    status, body = writer.call("PUT", f"/resource_providers/{host}/traits", {
        "traits": ["CUSTOM_TOPOLOGY"], "resource_provider_generation": 1})
    assert status == 200, body
    bouncer.wait_replayed()
    for _ in range(6):
        assert found() == {host}
    assert writer.call("DELETE", f"/resource_providers/{host}/traits")[0] == 204
    bouncer.wait_replayed()
    for _ in range(6):
        assert found() == set()
