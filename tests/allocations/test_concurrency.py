"""Allocation writes stay correct under concurrent clients (PostgreSQL only).

Every thread has its own database connection (Django opens one per thread)
and speaks HTTP through the full stack; connections are closed at the end.
"""
import random
import threading
import uuid as uuidlib
from collections import defaultdict

import pytest
from django.db import connection, connections
from django.db.models import Sum

from allocations.models import Allocation, Consumer
from providers.models import Inventory
from tests.conftest import PlacementClient, error_code
from tests.factories import allocate, make_consumer, make_provider

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor == "sqlite",
                       reason="needs concurrent writers (PostgreSQL, MySQL)"),
]


def run_threads(count, target):
    """Start `count` threads on target(index) together; return their results."""
    barrier = threading.Barrier(count)
    results = [None] * count
    errors = []

    def worker(index):
        try:
            barrier.wait()
            results[index] = target(index)
        except BaseException as exc:  # surfaced to the test below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


def claim_body(allocations):
    return {"allocations": {rp: {"resources": res} for rp, res in allocations.items()},
            "project_id": "race", "user_id": "race", "consumer_generation": None,
            "consumer_type": "INSTANCE"}


def assert_within_capacity():
    used = {(row["provider_id"], row["resource_class_id"]): row["used"]
            for row in Allocation.objects.values("provider_id", "resource_class_id")
            .annotate(used=Sum("used"))}
    inventories = {(inv.provider_id, inv.resource_class_id): inv
                   for inv in Inventory.objects.all()}
    for key, amount in used.items():
        inventory = inventories[key]
        assert amount <= (inventory.total - inventory.reserved) * inventory.allocation_ratio


def stored_allocations(consumer_uuid):
    result = defaultdict(dict)
    for row in Allocation.objects.filter(consumer__uuid=consumer_uuid).values(
            "provider__uuid", "resource_class__name", "used"):
        result[row["provider__uuid"]][row["resource_class__name"]] = row["used"]
    return dict(result)


def test_many_writers_fill_small_providers_without_overcommit():
    providers = [make_provider(f"small{i}", inventory={"VCPU": 10, "MEMORY_MB": 1000})
                 for i in range(3)]
    uuids = [rp.uuid for rp in providers]

    def writer(index):
        rnd = random.Random(index)
        client = PlacementClient()
        outcomes = []
        for _ in range(14):
            chosen = rnd.sample(uuids, rnd.choice([1, 2]))
            allocations = {rp: {"VCPU": rnd.randint(1, 3), "MEMORY_MB": rnd.randint(1, 3) * 100}
                           for rp in chosen}
            consumer = str(uuidlib.uuid4())
            if rnd.random() < 0.3:  # sometimes two consumers in one POST
                second = str(uuidlib.uuid4())
                second_allocations = {uuids[0]: {"VCPU": 1}}
                resp = client.post("/allocations", {
                    consumer: claim_body(allocations), second: claim_body(second_allocations)})
                outcomes.append((resp.status_code, error_code(resp) if resp.content else None,
                                 [(consumer, allocations), (second, second_allocations)]))
            else:
                resp = client.put(f"/allocations/{consumer}", claim_body(allocations))
                outcomes.append((resp.status_code, error_code(resp) if resp.content else None,
                                 [(consumer, allocations)]))
        return outcomes

    results = [o for outcome in run_threads(8, writer) for o in outcome]
    statuses = [status for status, _, _ in results]
    assert set(statuses) <= {204, 409}, statuses
    assert statuses.count(204) > 0 and statuses.count(409) > 0  # the providers did fill up
    assert_within_capacity()
    for status, _, consumers in results:
        for consumer, allocations in consumers:
            if status == 204:
                assert stored_allocations(consumer) == allocations
            else:  # a failed write leaves nothing behind, not even the consumer
                assert stored_allocations(consumer) == {}
                assert not Consumer.objects.filter(uuid=consumer).exists()


def test_race_on_nearly_full_provider_accepts_exactly_what_fits():
    rp = make_provider("hot", inventory={"VCPU": 40, "MEMORY_MB": 4096})
    filler = make_consumer(project="race", user="race")
    allocate(filler, rp, VCPU=32, MEMORY_MB=1024)  # 8 VCPU free: 4 claims of 2 fit
    fit = 4
    before = rp.generation  # 2: the inventory write and the filler's allocation

    def writer(index):
        client = PlacementClient()
        accepted = rejected = 0
        for _ in range(2):
            consumer = str(uuidlib.uuid4())
            for _attempt in range(20):  # retry only "try again" conflicts, like a client
                resp = client.put(f"/allocations/{consumer}",
                                  claim_body({rp.uuid: {"VCPU": 2, "MEMORY_MB": 64}}))
                if resp.status_code == 409 and \
                        error_code(resp) == "placement.concurrent_update":
                    continue
                break
            assert resp.status_code in (204, 409), resp.content
            if resp.status_code == 204:
                accepted += 1
            else:
                assert "would exceed the capacity" in resp.json()["errors"][0]["detail"]
                rejected += 1
        return accepted, rejected

    results = run_threads(10, writer)
    assert sum(a for a, _ in results) == fit
    assert sum(r for _, r in results) == 20 - fit
    assert Allocation.objects.filter(provider=rp).aggregate(v=Sum("used"))["v"] == \
        32 + 1024 + fit * (2 + 64)
    rp.refresh_from_db()
    assert rp.generation == before + fit  # one +1 per accepted write, none for rejected ones
    assert_within_capacity()


def test_concurrent_writes_to_one_consumer_bump_its_generation_once_each():
    rp = make_provider("shared", inventory={"VCPU": 100})
    consumer = str(uuidlib.uuid4())
    first = PlacementClient().put(f"/allocations/{consumer}", claim_body({rp.uuid: {"VCPU": 1}}))
    assert first.status_code == 204

    def writer(index):
        client = PlacementClient()
        resp = client.put(f"/allocations/{consumer}",
                          dict(claim_body({rp.uuid: {"VCPU": index + 1}}),
                               consumer_generation=1))
        return resp.status_code, error_code(resp) if resp.content else None

    results = run_threads(6, writer)
    assert sorted(s for s, _ in results) == [204] + [409] * 5  # exactly one winner
    assert all(code == "placement.concurrent_update" for s, code in results if s == 409)
    assert Consumer.objects.get(uuid=consumer).generation == 2
    assert Allocation.objects.filter(consumer__uuid=consumer).count() == 1
