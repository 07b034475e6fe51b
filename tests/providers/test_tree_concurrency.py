"""Concurrent tree writes keep the MPTT nested sets and roots consistent (PostgreSQL,
MySQL).

django-mptt rewrites many rows per insert/move; without the tree lock of
providers.services.tree_lock (its guard row), parallel writers corrupt lft/rght/tree_id.
"""
import random
import threading

import pytest
from django.db import connection, connections

from providers.models import ResourceProvider
from tests.conftest import PlacementClient
from tests.providers.tree_checks import assert_tree_integrity

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor == "sqlite",
                       reason="SQLite serialises writers itself; this proves the tree guard"),
]

THREADS = 6
PER_THREAD = 12


def worker(index, errors, barrier):
    api = PlacementClient()
    rng = random.Random(index)
    try:
        barrier.wait()
        mine = []
        resp = api.post("/resource_providers", {"name": f"root-{index}"})
        assert resp.status_code == 200, resp.content
        mine.append(resp.json()["uuid"])
        for n in range(PER_THREAD):
            parent = rng.choice(mine)
            resp = api.post("/resource_providers",
                            {"name": f"n-{index}-{n}", "parent_provider_uuid": parent})
            assert resp.status_code == 200, resp.content
            mine.append(resp.json()["uuid"])
            if n % 4 == 3:
                # move one of our leaves-or-subtrees under another thread's tree or a root
                others = list(ResourceProvider.objects.values_list("uuid", flat=True))
                moved, target = rng.choice(mine[1:]), rng.choice(others)
                resp = api.put(f"/resource_providers/{moved}",
                               {"name": ResourceProvider.objects.get(uuid=moved).name,
                                "parent_provider_uuid": target})
                assert resp.status_code in (200, 400), resp.content  # 400: loop
            if n % 5 == 4:
                resp = api.delete(f"/resource_providers/{mine[-1]}")
                # 409: another thread moved one of its providers under ours meanwhile
                assert resp.status_code in (204, 409), resp.content
                if resp.status_code == 204:
                    mine.pop()
                else:
                    assert resp.json()["errors"][0]["code"] == (
                        "placement.resource_provider.cannot_delete_parent")
    except Exception as exc:  # reported by the main thread
        errors.append(exc)
    finally:
        connections.close_all()


def test_parallel_tree_writes_keep_trees_consistent(db):
    errors = []
    barrier = threading.Barrier(THREADS)
    threads = [threading.Thread(target=worker, args=(i, errors, barrier))
               for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert ResourceProvider.objects.count() > THREADS * PER_THREAD // 2
    assert_tree_integrity()
