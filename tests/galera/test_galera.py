"""Several writers on a Galera cluster: claims, trees, a node lost and back, reads on
another node than the write. Every outcome is checked on every node's own data."""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from tests.galera.conftest import NODES, ROOT

CAPACITY = 10


def error_code(raw):
    return json.loads(raw)["errors"][0].get("code")


def claim(api, rp_uuid, consumer):
    """One client's claim of 1 VCPU, asking again after a concurrent update as nova
    does: "claimed", "full" (the capacity is used up), or what else was answered."""
    for _ in range(30):
        try:
            status, raw = api.call("PUT", f"/allocations/{consumer}", {
                "allocations": {rp_uuid: {"resources": {"VCPU": 1}}},
                "project_id": "p", "user_id": "u", "consumer_generation": None},
                version="1.28")
        except OSError as exc:   # the node went away under the request
            return f"no answer ({exc.__class__.__name__})"
        if status == 204:
            return "claimed"
        if status == 409 and error_code(raw) == "placement.concurrent_update":
            continue
        if status == 409 and b"exceed the capacity" in raw:
            return "full"
        if status == 503 and b"may or may not" not in raw:
            return "not applied"   # the answer says so, a lost COMMIT included
        return f"{status} {raw[:200]!r}"
    return "gave up"


def host(apis, name="cn"):
    status, raw = apis[1].call("POST", "/resource_providers", {"name": name})
    assert status == 200, raw
    rp = json.loads(raw)["uuid"]
    status, raw = apis[1].call("PUT", f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 0, "inventories": {"VCPU": {"total": CAPACITY}}})
    assert status == 200, raw
    return rp


def race(apis, rp, nodes, claimants=30):
    consumers = [str(uuid.uuid4()) for _ in range(claimants)]
    with ThreadPoolExecutor(12) as pool:
        outcomes = list(pool.map(
            lambda i: claim(apis[nodes[i % len(nodes)]], rp, consumers[i]), range(claimants)))
    return consumers, outcomes


def allocations_on_every_node(cluster, rp_uuid):
    """{node: sorted consumer uuids with an allocation on the provider}."""
    sql = ("SELECT c.uuid FROM allocations a JOIN consumers c ON c.id = a.consumer_id "
           "JOIN resource_providers r ON r.id = a.provider_id WHERE r.uuid = %s ORDER BY 1")
    return {node: [row[0] for row in cluster.sql(node, sql, [rp_uuid])] for node in NODES}


def test_claims_through_all_three_nodes_take_exactly_the_capacity(apis, clean):
    rp = host(apis)
    consumers, outcomes = race(apis, rp, NODES)
    assert sorted(set(outcomes)) == ["claimed", "full"], outcomes
    claimed = sorted(c for c, o in zip(consumers, outcomes) if o == "claimed")
    assert len(claimed) == CAPACITY
    assert allocations_on_every_node(clean, rp) == {node: claimed for node in NODES}
    for node in NODES:   # each API server answers the same usage (read on its node)
        status, raw = apis[node].call("GET", f"/resource_providers/{rp}/usages")
        assert (status, json.loads(raw)["usages"]) == (200, {"VCPU": CAPACITY})


def test_claims_through_one_node_take_exactly_the_capacity(apis, clean):
    rp = host(apis)
    consumers, outcomes = race(apis, rp, [2])
    assert sorted(set(outcomes)) == ["claimed", "full"], outcomes
    claimed = sorted(c for c, o in zip(consumers, outcomes) if o == "claimed")
    assert len(claimed) == CAPACITY
    assert allocations_on_every_node(clean, rp) == {node: claimed for node in NODES}


def asking_again(api, *request):
    """A request sent again after a concurrent update, as clients do (a few times)."""
    for _ in range(5):
        status, raw = api.call(*request)
        if not (status == 409 and error_code(raw) == "placement.concurrent_update"):
            break
    return status, raw


def tree_writer(api, index, problems):
    """Roots, children under random parents, re-parents and deletes, on one node."""
    rng = random.Random(index)
    mine = []
    for step in range(14):
        parent = rng.choice(mine) if mine and step % 3 else None
        status, raw = asking_again(api, "POST", "/resource_providers", {
            "name": f"t{index}-{step}", "parent_provider_uuid": parent})
        if status != 200:
            problems.append(("create", status, raw[:200]))
            continue
        mine.append(json.loads(raw)["uuid"])
        if step % 4 == 3 and len(mine) > 2:   # move a leaf under another provider
            leaf, target = mine[-1], rng.choice(mine[:-1])
            status, raw = asking_again(api, "PUT", f"/resource_providers/{leaf}", {
                "name": f"t{index}-{step}", "parent_provider_uuid": target})
            if status not in (200, 400):   # 400: a move Placement refuses
                problems.append(("move", status, raw[:200]))
        if step % 5 == 4:   # delete the newest provider (a leaf)
            status, raw = asking_again(api, "DELETE", f"/resource_providers/{mine.pop()}")
            if status != 204:
                problems.append(("delete", status, raw[:200]))


def test_tree_writes_on_different_nodes_leave_every_tree_consistent(apis, clean):
    problems = []
    threads = [threading.Thread(target=tree_writer, args=(apis[NODES[i % 3]], i, problems))
               for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert problems == []
    for node in NODES:   # placement-status upgrade check, on each node's data
        checked = subprocess.run(
            [sys.executable, "manage.py", "placement_status"], cwd=ROOT, timeout=300,
            capture_output=True, text=True, env={**os.environ, "DATABASE_URL": clean.url(node)})
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_write_on_one_node_is_read_on_another_at_once(apis, clean):
    for n in range(20):
        status, raw = apis[1 + n % 3].call("POST", "/resource_providers", {"name": f"ryw-{n}"})
        assert status == 200, raw
        rp = json.loads(raw)["uuid"]
        other = apis[1 + (n + 1) % 3]
        assert other.call("GET", f"/resource_providers/{rp}")[0] == 200


def test_a_node_killed_under_claims_and_rejoined_loses_and_invents_nothing(apis, clean):
    rp = host(apis)
    consumers = [str(uuid.uuid4()) for _ in range(30)]
    outcomes = [None] * len(consumers)

    def client(i):
        outcomes[i] = claim(apis[NODES[i % 3]], rp, consumers[i])

    with ThreadPoolExecutor(12) as pool:
        futures = [pool.submit(client, i) for i in range(len(consumers))]
        futures[8].result()
        clean.script("kill", clean.directory, "3")
    clean.script("rejoin", clean.directory, "3")
    told_claimed = {c for c, o in zip(consumers, outcomes) if o == "claimed"}
    unknown = {c for c, o in zip(consumers, outcomes)
               if o not in ("claimed", "full", "not applied")}
    held = allocations_on_every_node(clean, rp)
    assert held[1] == held[2] == held[3]                 # the rejoined node caught up
    assert told_claimed <= set(held[1])                  # nothing a client was told is lost
    assert set(held[1]) <= told_claimed | unknown        # nothing nobody asked for
    assert len(held[1]) <= CAPACITY


def wait_until(check, what, seconds=120):
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.5)


def test_a_desynced_node_is_not_ready_and_says_its_state(apis, clean):
    assert apis[2].readiness()[0] == 200
    clean.sql(2, "SET GLOBAL wsrep_desync = ON")
    try:
        status, document = apis[2].readiness()
        assert status == 503
        assert "Donor/Desynced (wsrep_local_state 2)" in document["checks"]["database"]
        assert apis[1].readiness()[0] == 200
    finally:
        clean.sql(2, "SET GLOBAL wsrep_desync = OFF")
    wait_until(lambda: apis[2].readiness()[0] == 200, "node 2 ready again")


def seen_database_check(api, seen):
    seen.append(api.readiness())
    return seen[-1][1].get("checks", {}).get("database", "")


def test_a_cut_off_node_is_not_ready_and_says_why_then_rejoins(apis, clean):
    """gmcast.isolate=1: node 3 leaves the primary component; its /readyz says so (a load
    balancer routes around it), the other two stay ready and take writes."""
    clean.sql(3, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'")
    try:
        # (until the cluster has noticed, its other checks may fail on a lock wait, or
        # no thread may be free to answer)
        seen = []
        wait_until(lambda: "non-Primary" in seen_database_check(apis[3], seen),
                   "node 3 outside the primary component")
        status, document = seen[-1]
        assert status == 503
        assert "cluster status non-Primary" in document["checks"]["database"], document
        assert apis[1].readiness()[0] == 200
        host(apis)   # writes through node 1 go on
    finally:
        clean.sql(3, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'")
    wait_until(lambda: apis[3].readiness()[0] == 200, "node 3 back in the cluster")


def test_a_frozen_node_costs_a_client_the_round_trip_timeout_not_the_freeze(apis, clean):
    """SIGSTOP of node 3's server: a request to its API server is answered 503 (after
    round_trip_timeout, 12 s here) while the node is still frozen, not when it thaws."""
    rp = host(apis)
    answers = []
    pid = clean.pid(3)
    os.kill(pid, signal.SIGSTOP)
    try:
        reader = threading.Thread(target=lambda: answers.append(
            apis[3].call("GET", f"/resource_providers/{rp}", timeout=120)))
        reader.start()
        reader.join(90)   # a cap for the test, not the figure tested
        frozen_all_along = not reader.is_alive()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert frozen_all_along, "no answer while the node was frozen"
    status, raw = answers[0]
    assert status == 503 and b"The database is unavailable" in raw, raw
    wait_until(lambda: apis[3].call("GET", f"/resource_providers/{rp}")[0] == 200,
               "node 3 answering again")
