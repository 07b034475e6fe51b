"""A COMMIT whose answer is lost is looked up, and the client is told what happened
(foundation/db_faults.py), on every write path: the proxy in front of the suite's
database (tests/db_proxy.py) sends the COMMIT on and drops the connection before its
answer (applied), or drops it with the COMMIT (not applied). PostgreSQL is asked
txid_status() of the transaction; MariaDB/MySQL reads back the change log's entry.
Only when the database cannot be reached again is the answer "may or may not".
Run in the PostgreSQL and MariaDB passes.
"""
import uuid

import pytest
from django.db import connection

from tests.api.test_database_refusals import proxy  # noqa: F401  (the fixture)
from tests.conftest import error_detail

pytestmark = [
    pytest.mark.skipif(connection.vendor not in ("postgresql", "mysql"),
                       reason="a database server's lost connection (PostgreSQL, MariaDB/MySQL)"),
    pytest.mark.django_db(transaction=True),
]

NOT_APPLIED = "it was not applied. Please retry."
MAY_OR_MAY_NOT = "it may or may not have been applied. Read it back before retrying."


def provider(api, name="cn", vcpu=8):
    rp = api.post("/resource_providers", {"name": name}).json()["uuid"]
    assert api.put(f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": vcpu}}}).status_code == 200
    return rp


def generation(api, rp):
    return api.get(f"/resource_providers/{rp}").json()["generation"]


def claim(rp, consumer_generation=None):
    return {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": "p",
            "user_id": "u", "consumer_generation": consumer_generation,
            "consumer_type": "INSTANCE"}


# Each write path: setup(api) -> state; the request (method, path, body) from the state,
# its status when it succeeds; applied(api, state): is its effect there?
class Path:
    def __init__(self, name, setup, request, status, applied):
        self.name, self.setup, self.request = name, setup, request
        self.status, self.applied = status, applied


def _claimed(api):
    rp, consumer = provider(api), str(uuid.uuid4())
    assert api.put(f"/allocations/{consumer}", claim(rp)).status_code == 204
    return {"rp": rp, "consumer": consumer}


def _with_trait(api):
    rp = provider(api)
    assert api.put(f"/resource_providers/{rp}/traits", {
        "resource_provider_generation": generation(api, rp),
        "traits": ["HW_CPU_X86_AVX"]}).status_code == 200
    return {"rp": rp}


def _reshape(api, s):
    rp, consumer = s["rp"], s["consumer"]
    return ("POST", "/reshaper", {
        "inventories": {rp: {"resource_provider_generation": generation(api, rp),
                             "inventories": {"VCPU": {"total": 16}}}},
        "allocations": {consumer: {"allocations": {rp: {"resources": {"VCPU": 2}}},
                                   "project_id": "p", "user_id": "u",
                                   "consumer_generation": 1, "consumer_type": "INSTANCE"}}})


PATHS = [
    Path("PUT allocations",
         lambda api: {"rp": provider(api), "consumer": str(uuid.uuid4())},
         lambda api, s: ("PUT", f"/allocations/{s['consumer']}", claim(s["rp"])), 204,
         lambda api, s: bool(api.get(f"/allocations/{s['consumer']}").json()["allocations"])),
    Path("POST allocations",
         lambda api: {"rp": provider(api), "consumer": str(uuid.uuid4())},
         lambda api, s: ("POST", "/allocations", {s["consumer"]: claim(s["rp"])}), 204,
         lambda api, s: bool(api.get(f"/allocations/{s['consumer']}").json()["allocations"])),
    Path("DELETE allocations", _claimed,
         lambda api, s: ("DELETE", f"/allocations/{s['consumer']}", None), 204,
         lambda api, s: not api.get(f"/allocations/{s['consumer']}").json()["allocations"]),
    Path("PUT inventories",
         lambda api: {"rp": provider(api)},
         lambda api, s: ("PUT", f"/resource_providers/{s['rp']}/inventories", {
             "resource_provider_generation": generation(api, s["rp"]),
             "inventories": {"VCPU": {"total": 32}}}), 200,
         lambda api, s: api.get(f"/resource_providers/{s['rp']}/inventories")
         .json()["inventories"]["VCPU"]["total"] == 32),
    Path("DELETE inventories",
         lambda api: {"rp": provider(api)},
         lambda api, s: ("DELETE", f"/resource_providers/{s['rp']}/inventories", None), 204,
         lambda api, s: not api.get(f"/resource_providers/{s['rp']}/inventories")
         .json()["inventories"]),
    Path("POST inventory",
         lambda api: {"rp": provider(api)},
         lambda api, s: ("POST", f"/resource_providers/{s['rp']}/inventories", {
             "resource_provider_generation": generation(api, s["rp"]),
             "resource_class": "MEMORY_MB", "total": 1024}), 201,
         lambda api, s: "MEMORY_MB" in api.get(f"/resource_providers/{s['rp']}/inventories")
         .json()["inventories"]),
    Path("PUT inventory",
         lambda api: {"rp": provider(api)},
         lambda api, s: ("PUT", f"/resource_providers/{s['rp']}/inventories/VCPU", {
             "resource_provider_generation": generation(api, s["rp"]), "total": 64}), 200,
         lambda api, s: api.get(f"/resource_providers/{s['rp']}/inventories/VCPU")
         .json()["total"] == 64),
    Path("PUT trait",
         lambda api: {},
         lambda api, s: ("PUT", "/traits/CUSTOM_LOST_COMMIT", None), 201,
         lambda api, s: api.get("/traits/CUSTOM_LOST_COMMIT").status_code == 204),
    Path("PUT provider traits",
         lambda api: {"rp": provider(api)},
         lambda api, s: ("PUT", f"/resource_providers/{s['rp']}/traits", {
             "resource_provider_generation": generation(api, s["rp"]),
             "traits": ["HW_CPU_X86_AVX"]}), 200,
         lambda api, s: api.get(f"/resource_providers/{s['rp']}/traits")
         .json()["traits"] == ["HW_CPU_X86_AVX"]),
    Path("DELETE provider traits", _with_trait,
         lambda api, s: ("DELETE", f"/resource_providers/{s['rp']}/traits", None), 204,
         lambda api, s: not api.get(f"/resource_providers/{s['rp']}/traits")
         .json()["traits"]),
    Path("DELETE trait",
         lambda api: api.put("/traits/CUSTOM_GOING") and {},
         lambda api, s: ("DELETE", "/traits/CUSTOM_GOING", None), 204,
         lambda api, s: api.get("/traits/CUSTOM_GOING").status_code == 404),
    Path("PUT provider aggregates",
         lambda api: {"rp": provider(api), "agg": str(uuid.uuid4())},
         lambda api, s: ("PUT", f"/resource_providers/{s['rp']}/aggregates", {
             "resource_provider_generation": generation(api, s["rp"]),
             "aggregates": [s["agg"]]}), 200,
         lambda api, s: api.get(f"/resource_providers/{s['rp']}/aggregates")
         .json()["aggregates"] == [s["agg"]]),
    Path("POST provider",
         lambda api: {"uuid": str(uuid.uuid4())},
         lambda api, s: ("POST", "/resource_providers", {"name": "new", "uuid": s["uuid"]}),
         200,
         lambda api, s: api.get(f"/resource_providers/{s['uuid']}").status_code == 200),
    Path("PUT provider",
         lambda api: {"rp": provider(api)},
         lambda api, s: ("PUT", f"/resource_providers/{s['rp']}", {"name": "renamed"}), 200,
         lambda api, s: api.get(f"/resource_providers/{s['rp']}").json()["name"] == "renamed"),
    Path("DELETE provider",
         lambda api: {"rp": provider(api)},
         lambda api, s: ("DELETE", f"/resource_providers/{s['rp']}", None), 204,
         lambda api, s: api.get(f"/resource_providers/{s['rp']}").status_code == 404),
    Path("PUT resource class",
         lambda api: {},
         lambda api, s: ("PUT", "/resource_classes/CUSTOM_LOST_COMMIT", None), 201,
         lambda api, s: api.get("/resource_classes/CUSTOM_LOST_COMMIT").status_code == 200),
    Path("DELETE resource class",
         lambda api: api.put("/resource_classes/CUSTOM_GOING") and {},
         lambda api, s: ("DELETE", "/resource_classes/CUSTOM_GOING", None), 204,
         lambda api, s: api.get("/resource_classes/CUSTOM_GOING").status_code == 404),
    Path("POST reshaper", _claimed, _reshape, 204,
         lambda api, s: api.get(f"/allocations/{s['consumer']}").json()["allocations"]
         [s["rp"]]["resources"] == {"VCPU": 2}),
]


def send(api, method, path, body):
    return api.request(method, path, body)


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_a_commit_applied_before_its_answer_was_lost_is_answered_success(api, proxy, path):
    state = path.setup(api)
    proxy.cut_commit(applied=True)
    response = send(api, *path.request(api, state))
    assert response.status_code == path.status, response.content
    connection.close()
    assert path.applied(api, state)


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_a_commit_lost_before_it_was_applied_is_answered_not_applied(api, proxy, path):
    state = path.setup(api)
    proxy.cut_commit(applied=False)
    response = send(api, *path.request(api, state))
    assert response.status_code == 503, response.content
    assert NOT_APPLIED in error_detail(response)
    assert response["Retry-After"] == "5"
    connection.close()
    assert not path.applied(api, state)


@pytest.mark.parametrize("applied", [True, False])
def test_when_the_database_cannot_be_reached_again_the_outcome_is_unknown(
        api, proxy, settings, applied):
    """The COMMIT's answer is lost and nothing listens any more: after
    outcome_lookup_timeout the answer says so, whatever happened (and is not replaced
    by the failure to reconnect that Django's atomic() used to end with)."""
    settings.PLACEMENT_DB_OUTCOME_LOOKUP_TIMEOUT = 1
    path = PATHS[0]
    state = path.setup(api)
    proxy.cut_commit(applied=applied, then_stop_listening=True)
    response = send(api, *path.request(api, state))
    assert response.status_code == 503, response.content
    assert MAY_OR_MAY_NOT in error_detail(response)
    proxy.listen()
    connection.close()
    assert path.applied(api, state) is applied


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_a_connection_lost_just_after_its_commit_was_answered_is_answered_success(
        api, proxy, path):
    """MySQL's driver turns autocommit back on after COMMIT, a round trip of its own:
    a server lost then has already committed, and the write is answered as saved."""
    state = path.setup(api)
    proxy.cut_after_commit()
    response = send(api, *path.request(api, state))
    assert response.status_code == path.status, response.content
    connection.close()
    assert path.applied(api, state)
