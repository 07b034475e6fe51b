"""Values at and past the columns' limits, on every database: what fits is stored and
answered exactly (a 4-byte character too: utf8mb4 on MySQL), what does not is Placement's
400, never a 500 and never a value cut or clamped by the database (MySQL's strict mode)."""
from urllib.parse import quote

import pytest

from tests.conftest import error_code

EMOJI = "\U0001F600"   # four bytes in UTF-8


def test_a_name_of_200_four_byte_characters_is_kept_whole(api):
    name = EMOJI * 200
    created = api.post("/resource_providers", {"name": name})
    assert created.status_code == 200, created.content
    assert api.get(f"/resource_providers/{created.json()['uuid']}").json()["name"] == name
    listed = api.get(f"/resource_providers?name={quote(name)}").json()["resource_providers"]
    assert [rp["name"] for rp in listed] == [name]


def test_a_name_one_character_too_long_is_refused(api):
    response = api.post("/resource_providers", {"name": EMOJI * 201})
    assert response.status_code == 400
    assert api.get("/resource_providers").json()["resource_providers"] == []


def test_names_differing_only_in_case_are_two_providers(api):
    assert api.post("/resource_providers", {"name": "rack-A"}).status_code == 200
    assert api.post("/resource_providers", {"name": "rack-a"}).status_code == 200
    again = api.post("/resource_providers", {"name": "rack-A"})
    assert again.status_code == 409
    assert error_code(again) == "placement.duplicate_name"


@pytest.mark.parametrize("total", [2 ** 31, 2 ** 63, 10 ** 30])
def test_a_huge_integer_is_refused_and_nothing_is_stored(api, total):
    rp = api.post("/resource_providers", {"name": "cn"}).json()
    response = api.put(f"/resource_providers/{rp['uuid']}/inventories", {
        "resource_provider_generation": 0, "inventories": {"VCPU": {"total": total}}})
    assert response.status_code == 400, response.content
    inventories = api.get(f"/resource_providers/{rp['uuid']}/inventories").json()
    assert inventories["inventories"] == {}


def test_a_consumer_project_with_four_byte_characters_round_trips(api):
    rp = api.post("/resource_providers", {"name": "cn"}).json()
    assert api.put(f"/resource_providers/{rp['uuid']}/inventories", {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 8}}}).status_code == 200
    consumer = "5d5b5e4a-2f50-4c2e-9f27-0cc35d6c3a31"
    project = EMOJI * 255
    response = api.put(f"/allocations/{consumer}", {
        "allocations": {rp["uuid"]: {"resources": {"VCPU": 1}}},
        "project_id": project, "user_id": "u", "consumer_generation": None},
        version="1.28")
    assert response.status_code == 204, response.content
    assert api.get(f"/allocations/{consumer}").json()["project_id"] == project
