"""A reshape racing allocation writers stays consistent (PostgreSQL, MySQL)."""
import uuid as uuidlib

import pytest
from django.db import connection
from django.db.models import Sum

from allocations.models import Allocation
from providers.models import Inventory
from tests.allocations.test_concurrency import run_threads
from tests.conftest import PlacementClient
from tests.factories import allocate, make_consumer, make_provider

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor == "sqlite",
                       reason="needs concurrent writers (PostgreSQL, MySQL)"),
]

PROJECT, USER = "race-project", "race-user"


def claim(rp_uuid, **resources):
    return {str(uuidlib.uuid4()): {
        "allocations": {rp_uuid: {"resources": resources}},
        "project_id": PROJECT, "user_id": USER, "consumer_generation": None,
        "consumer_type": "INSTANCE"}}


@pytest.mark.parametrize("round_", range(3))
def test_reshape_races_allocation_writers(round_):
    cn = make_provider("cn", inventory={"VCPU": 64, "VGPU": 8})
    gpus = [make_provider(f"gpu{i}", parent=cn) for i in range(2)]
    mover = make_consumer(project=PROJECT, user=USER, consumer_type="INSTANCE")
    allocate(mover, cn, VCPU=2, VGPU=2)
    reshape_body = {
        "inventories": {
            # 2 (its inventory, mover's allocation): with a stale one the reshape would
            # always lose, and the race would not be tested
            cn.uuid: {"resource_provider_generation": cn.generation,
                      "inventories": {"VCPU": {"total": 64}}},
            gpus[0].uuid: {"resource_provider_generation": 0,
                           "inventories": {"VGPU": {"total": 4}}},
            gpus[1].uuid: {"resource_provider_generation": 0,
                           "inventories": {"VGPU": {"total": 4}}},
        },
        "allocations": {mover.uuid: {
            "allocations": {cn.uuid: {"resources": {"VCPU": 2}},
                            gpus[0].uuid: {"resources": {"VGPU": 2}}},
            "project_id": PROJECT, "user_id": USER, "consumer_generation": 1,
            "consumer_type": "INSTANCE"}},
    }

    def work(index):
        api = PlacementClient()
        if index == 0:
            return "reshape", api.post("/reshaper", reshape_body).status_code
        if index % 2:
            return "claim", api.post("/allocations", claim(cn.uuid, VGPU=1, VCPU=1)).status_code
        return "claim", api.post("/allocations", claim(gpus[0].uuid, VGPU=1)).status_code

    results = run_threads(7, work)
    statuses = {status for _, status in results}
    assert statuses <= {204, 409}, results
    reshaped = ("reshape", 204) in results

    # Every allocation is backed by inventory and within capacity.
    inventories = {(inv.provider_id, inv.resource_class_id): inv for inv in Inventory.objects.all()}
    for row in (Allocation.objects.values("provider_id", "resource_class_id")
                .annotate(used=Sum("used"))):
        inventory = inventories[(row["provider_id"], row["resource_class_id"])]
        assert row["used"] <= inventory.total - inventory.reserved
    vgpu_on_cn = Allocation.objects.filter(provider=cn, resource_class__name="VGPU")
    if reshaped:
        assert not vgpu_on_cn.exists()
        assert mover.allocations.get(resource_class__name="VGPU").provider_id == gpus[0].id
    else:
        # the reshape lost to a claim that changed cn's generation first
        assert vgpu_on_cn.filter(consumer=mover).exists()
