"""Lists and maps whose order in Placement comes from the database rows come in id
(creation) order, whatever the database: clients compare them as lists."""
import uuid as uuidlib

import pytest

# Created in this order, so id order differs from name order.
CUSTOM_TRAITS = ["CUSTOM_ZED", "CUSTOM_ALPHA", "CUSTOM_MID"]
CUSTOM_CLASSES = ["CUSTOM_ZED", "CUSTOM_ALPHA"]


@pytest.fixture
def provider(api):
    for name in CUSTOM_TRAITS:
        assert api.put(f"/traits/{name}").status_code == 201
    for name in CUSTOM_CLASSES:
        assert api.put(f"/resource_classes/{name}").status_code == 201
    uuid = str(uuidlib.uuid4())
    assert api.post("/resource_providers", {"name": "rp", "uuid": uuid}).status_code == 200
    response = api.put(f"/resource_providers/{uuid}/traits", {
        "resource_provider_generation": 0,
        "traits": ["CUSTOM_MID", "HW_CPU_X86_AVX", "CUSTOM_ALPHA", "CUSTOM_ZED"]})
    assert response.status_code == 200
    assert response.json()["traits"] == ["HW_CPU_X86_AVX"] + CUSTOM_TRAITS
    response = api.put(f"/resource_providers/{uuid}/inventories", {
        "resource_provider_generation": 1,
        "inventories": {"CUSTOM_ALPHA": {"total": 4}, "VCPU": {"total": 8},
                        "CUSTOM_ZED": {"total": 2}}})
    assert response.status_code == 200
    return uuid


def test_provider_traits_in_trait_id_order(api, provider):
    response = api.get(f"/resource_providers/{provider}/traits")
    assert response.json()["traits"] == ["HW_CPU_X86_AVX"] + CUSTOM_TRAITS


def test_summary_traits_in_trait_id_order(api, provider):
    response = api.get("/allocation_candidates?resources=VCPU:1", version="1.17")
    summary = response.json()["provider_summaries"][provider]
    assert summary["traits"] == ["HW_CPU_X86_AVX"] + CUSTOM_TRAITS


def test_inventories_and_usages_in_class_id_order(api, provider):
    expected = ["VCPU"] + CUSTOM_CLASSES
    inventories = api.get(f"/resource_providers/{provider}/inventories").json()
    assert list(inventories["inventories"]) == expected
    usages = api.get(f"/resource_providers/{provider}/usages").json()
    assert list(usages["usages"]) == expected
    consumer = str(uuidlib.uuid4())
    response = api.put(f"/allocations/{consumer}", {
        "allocations": {provider: {"resources": {"CUSTOM_ZED": 1, "CUSTOM_ALPHA": 1,
                                                 "VCPU": 1}}},
        "project_id": "p", "user_id": "u", "consumer_generation": None}, version="1.28")
    assert response.status_code == 204
    totals = api.get("/usages?project_id=p", version="1.9").json()["usages"]
    assert list(totals) == expected
    grouped = api.get("/usages?project_id=p", version="1.38").json()["usages"]
    assert [k for k in grouped["unknown"] if k != "consumer_count"] == expected


def test_aggregates_in_aggregate_id_order(api, provider):
    first, second, third = (str(uuidlib.uuid4()) for _ in range(3))
    response = api.put(f"/resource_providers/{provider}/aggregates",
                       {"aggregates": [second, first], "resource_provider_generation": 2},
                       version="1.19")
    assert response.status_code == 200
    response = api.put(f"/resource_providers/{provider}/aggregates",
                       {"aggregates": [third, first, second],
                        "resource_provider_generation": 3}, version="1.19")
    assert response.json()["aggregates"] == [third, first, second]  # echoes the request
    response = api.get(f"/resource_providers/{provider}/aggregates", version="1.19")
    assert response.json()["aggregates"] == [second, first, third]
