"""Read replicas with real servers: the replica routes read from the streaming standby,
writes and their reads go to the primary, a lagging or stopped standby is skipped.

The nodes reach both servers through pgbouncer in transaction-pooling mode, as in
production; the tests pause replay and stop the standby on the servers themselves."""
import re
import time
import urllib.request
import uuid as uuidlib

import pytest

from tests.scaling.conftest import Node, wait_for

LONG = 3600  # a lag bound never reached: this node reads from the standby, however stale


@pytest.fixture(scope="module")
def relaxed(bouncer):
    node = Node(bouncer, "relaxed", **through(bouncer),
                DATABASE_REPLICA_MAX_LAG=LONG)
    yield node
    node.stop()


@pytest.fixture(scope="module")
def strict(bouncer):
    node = Node(bouncer, "strict", **through(bouncer),
                DATABASE_REPLICA_MAX_LAG=0.5)
    yield node
    node.stop()


@pytest.fixture(scope="module")
def candidates_only(bouncer):
    node = Node(bouncer, "candidates-only", **through(bouncer),
                DATABASE_REPLICA_MAX_LAG=LONG,
                PLACEMENT_REPLICA_READ_ROUTES="allocation_candidates")
    yield node
    node.stop()


def through(bouncer):
    """Both databases through pgbouncer."""
    return {"DATABASE_URL": bouncer.url("primary", via_bouncer=True),
            "DATABASE_REPLICA_URLS": bouncer.url("standby", via_bouncer=True)}


def make_provider(node, name, vcpu=8):
    uuid = str(uuidlib.uuid4())
    status, _ = node.call("POST", "/resource_providers", {"name": name, "uuid": uuid})
    assert status == 200
    status, _ = node.call("PUT", f"/resource_providers/{uuid}/inventories", {
        "resource_provider_generation": 0, "inventories": {"VCPU": {"total": vcpu}}})
    assert status == 200
    return uuid


def claim(node, provider, vcpu=1):
    return node.call("PUT", f"/allocations/{uuidlib.uuid4()}", {
        "allocations": {provider: {"resources": {"VCPU": vcpu}}}, "project_id": "p",
        "user_id": "u", "consumer_generation": None, "consumer_type": "INSTANCE"})


def listed(node):
    status, body = node.call("GET", "/resource_providers")
    assert status == 200, body
    return {rp["uuid"] for rp in body["resource_providers"]}


def candidates(node):
    status, body = node.call("GET", "/allocation_candidates?resources=VCPU:1")
    assert status == 200, body
    return set(body["provider_summaries"])


def settle(cluster, *nodes):
    """The standby has everything and every node's health cache has seen it so."""
    cluster.wait_replayed()
    time.sleep(1.1)
    for node in nodes:
        listed(node)


def test_replica_routes_read_the_standby_while_writes_read_the_primary(
        cluster, relaxed, strict, candidates_only):
    old = make_provider(relaxed, "replica-old")
    settle(cluster, relaxed, strict, candidates_only)
    assert old in listed(relaxed)
    cluster.query("standby", "SELECT pg_wal_replay_pause()")
    try:
        new = make_provider(relaxed, "replica-new")  # reads its generation on the primary
        status, body = claim(relaxed, new)  # the standby does not know `new` yet
        assert status == 204, body
        # The paused standby answers the replica routes: `new` is not there yet.
        assert old in listed(relaxed) and new not in listed(relaxed)
        assert old in candidates(relaxed) and new not in candidates(relaxed)
        # Only the configured routes: this node lists providers from the primary.
        assert new not in candidates(candidates_only) and new in listed(candidates_only)
        # Other routes read the primary.
        status, body = relaxed.call("GET", f"/resource_providers/{new}/usages")
        assert status == 200 and body["usages"] == {"VCPU": 1}
        # Past the strict node's bound, the primary answers its replica routes.
        time.sleep(1.1)
        assert {old, new} <= listed(strict)
        assert {old, new} <= candidates(strict)
        assert "replica replica1 skipped, the primary answers its reads: lags" in \
            strict.log_text()
        scraped = urllib.request.urlopen(urllib.request.Request(
            f"http://127.0.0.1:{strict.port}/metrics", headers={"X-Auth-Token": "admin"})).read()
        assert re.search(rb"^placement_replica_fallbacks_total [1-9]", scraped, re.M)
    finally:
        cluster.query("standby", "SELECT pg_wal_replay_resume()")
    cluster.wait_replayed()
    assert new in listed(relaxed)


def test_a_stopped_standby_is_skipped_without_client_errors(cluster, relaxed):
    provider = make_provider(relaxed, "replica-stop")
    settle(cluster, relaxed)
    cluster.pg_ctl("standby", "stop", "-m", "fast")
    try:
        # The first read still believes the standby up (health is cached for a second):
        # it fails there and is answered again from the primary.
        for _ in range(3):
            assert provider in listed(relaxed)
            assert provider in candidates(relaxed)
        another = make_provider(relaxed, "replica-while-down")
        assert another in listed(relaxed)
        assert "replica replica1 skipped, the primary answers its reads: down" in \
            relaxed.log_text()
    finally:
        cluster.pg_ctl("standby", "start")
    cluster.wait_replayed()
    wait_for(lambda: "replica replica1 is used for reads again" in (
        listed(relaxed) and relaxed.log_text()), timeout=30)



def test_readiness_reports_the_standby_and_its_lag(cluster):
    """/readyz names the replica and its lag; a lagging one is reported as not used and
    the node stays ready (the primary answers its reads). Directly, without pgbouncer."""
    node = Node(cluster, "ready", DATABASE_REPLICA_URLS=cluster.url("standby"),
                DATABASE_REPLICA_MAX_LAG=0.5)
    try:
        cluster.wait_replayed()
        wait_for(lambda: node.call("GET", "/readyz")[1]["checks"].get("replica1", "")
                 .startswith("ok: "))
        cluster.query("standby", "SELECT pg_wal_replay_pause()")
        try:
            make_provider(node, "while-paused")   # a commit the standby has not replayed
            wait_for(lambda: "lags" in node.call("GET", "/readyz")[1]["checks"]["replica1"]
                     and "not used" in node.call("GET", "/readyz")[1]["checks"]["replica1"])
            status, document = node.call("GET", "/readyz")
            assert status == 200, document
            assert document["checks"]["replica1"].startswith(
                "not used, the primary answers its reads: lags "), document
        finally:
            cluster.query("standby", "SELECT pg_wal_replay_resume()")
    finally:
        node.stop()
