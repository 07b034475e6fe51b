"""GET /resource_providers/{uuid}/allocations, .../usages and GET /usages."""
import uuid as uuidlib

import pytest

from tests.conftest import error_detail
from tests.factories import allocate, make_consumer, make_provider


def new_uuid():
    return str(uuidlib.uuid4())


@pytest.fixture
def world(db):
    """Two providers; consumers of two projects and several types."""
    cn = make_provider("cn", inventory={"VCPU": 16, "MEMORY_MB": 4096, "DISK_GB": 500})
    ss = make_provider("ss", inventory={"DISK_GB": 1000})
    inst1 = make_consumer(project="p1", user="u1", consumer_type="INSTANCE")
    inst2 = make_consumer(project="p1", user="u2", consumer_type="INSTANCE")
    mig = make_consumer(project="p1", user="u1", consumer_type="MIGRATION")
    untyped = make_consumer(project="p1", user="u1")
    other = make_consumer(project="p2", user="u1", consumer_type="INSTANCE")
    allocate(inst1, cn, VCPU=2, MEMORY_MB=512)
    allocate(inst1, ss, DISK_GB=10)
    allocate(inst2, cn, VCPU=1)
    allocate(mig, cn, VCPU=4)
    allocate(untyped, ss, DISK_GB=7)
    allocate(other, cn, VCPU=3)
    return {"cn": cn, "ss": ss, "inst1": inst1, "inst2": inst2, "mig": mig,
            "untyped": untyped, "other": other}


def test_provider_usages(api, world):
    empty = make_provider("empty")
    resp = api.get(f"/resource_providers/{world['cn'].uuid}/usages")
    assert resp.status_code == 200
    # the inventory write and five allocation writes each bumped it
    assert resp.json() == {"resource_provider_generation": 6,
                           "usages": {"VCPU": 10, "MEMORY_MB": 512, "DISK_GB": 0}}
    assert resp["Cache-Control"] == "no-cache" and "Last-Modified" in resp
    assert api.get(f"/resource_providers/{empty.uuid}/usages").json()["usages"] == {}
    old = api.get(f"/resource_providers/{world['cn'].uuid}/usages", version="1.14")
    assert "Cache-Control" not in old


def test_provider_usages_errors(api, world):
    missing = new_uuid()
    resp = api.get(f"/resource_providers/{missing}/usages")
    assert resp.status_code == 404
    assert (f"No resource provider with uuid {missing} found: "
            f"No resource provider with uuid {missing} found  ") in error_detail(resp)
    assert api.get(f"/resource_providers/{world['cn'].uuid}/usages",
                   token="user").status_code == 403
    assert api.get(f"/resource_providers/{world['cn'].uuid}/usages",
                   headers={"Accept": "text/plain"}).status_code == 406
    resp = api.post(f"/resource_providers/{world['cn'].uuid}/usages", {})
    assert resp.status_code == 405 and resp["Allow"] == "GET"


def test_provider_allocations(api, world):
    resp = api.get(f"/resource_providers/{world['ss'].uuid}/allocations")
    assert resp.status_code == 200
    assert resp.json() == {
        "allocations": {
            # inst1 was written twice (cn, then ss)
            world["inst1"].uuid: {"resources": {"DISK_GB": 10}, "consumer_generation": 2},
            world["untyped"].uuid: {"resources": {"DISK_GB": 7}, "consumer_generation": 1},
        },
        "resource_provider_generation": 3,  # its inventory, then two allocation writes
    }
    assert resp["Cache-Control"] == "no-cache"
    old = api.get(f"/resource_providers/{world['ss'].uuid}/allocations", version="1.27").json()
    assert old["allocations"][world["inst1"].uuid] == {"resources": {"DISK_GB": 10}}
    empty = make_provider("empty")
    assert api.get(f"/resource_providers/{empty.uuid}/allocations").json() == {
        "allocations": {}, "resource_provider_generation": 0}


def test_provider_allocations_unknown_provider(api, db):
    missing = new_uuid()
    resp = api.get(f"/resource_providers/{missing}/allocations")
    assert resp.status_code == 404
    assert f"Resource provider '{missing}' not found" in error_detail(resp)


def test_usages_before_1_38(api, world):
    resp = api.get("/usages?project_id=p1", version="1.9")
    assert resp.status_code == 200
    assert resp.json() == {"usages": {"VCPU": 7, "MEMORY_MB": 512, "DISK_GB": 17}}
    assert api.get("/usages?project_id=p1&user_id=u2", version="1.9").json() == {
        "usages": {"VCPU": 1}}
    assert api.get("/usages?project_id=nobody", version="1.9").json() == {"usages": {}}
    assert api.get("/usages?project_id=p1", version="1.8").status_code == 404


def test_usages_grouped_by_consumer_type(api, world):
    resp = api.get("/usages?project_id=p1")
    assert resp.json() == {"usages": {
        "INSTANCE": {"consumer_count": 2, "VCPU": 3, "MEMORY_MB": 512, "DISK_GB": 10},
        "MIGRATION": {"consumer_count": 1, "VCPU": 4},
        "unknown": {"consumer_count": 1, "DISK_GB": 7},
    }}
    assert resp["Cache-Control"] == "no-cache"
    assert api.get("/usages?project_id=p1&consumer_type=all").json() == {"usages": {
        "all": {"consumer_count": 4, "VCPU": 7, "MEMORY_MB": 512, "DISK_GB": 17}}}
    assert api.get("/usages?project_id=p1&consumer_type=unknown").json() == {"usages": {
        "unknown": {"consumer_count": 1, "DISK_GB": 7}}}
    assert api.get("/usages?project_id=p1&user_id=u1&consumer_type=INSTANCE").json() == {
        "usages": {"INSTANCE": {"consumer_count": 1, "VCPU": 2, "MEMORY_MB": 512,
                                "DISK_GB": 10}}}
    assert api.get("/usages?project_id=p1&consumer_type=allfoo").json() == {"usages": {}}
    assert api.get("/usages?project_id=nobody&consumer_type=all").json() == {"usages": {}}


@pytest.mark.parametrize("query,version", [
    ("", "1.39"),
    ("project_id=", "1.39"),
    ("project_id=p1&user_id=", "1.39"),
    ("project_id=" + "x" * 256, "1.39"),
    ("project_id=p1&consumer_type=all", "1.37"),
    ("project_id=p1&consumer_type=instance", "1.39"),
    ("project_id=p1&bogus=1", "1.39"),
])
def test_usages_bad_query(api, world, query, version):
    resp = api.get(f"/usages?{query}", version=version)
    assert resp.status_code == 400
    assert "Invalid query string parameters" in error_detail(resp)


def test_usages_policy_targets_queried_project(make_api, world):
    reader = make_api(token="someone:p1")
    headers = {"X-Roles": "reader"}
    assert reader.get("/usages?project_id=p1", headers=headers).status_code == 200
    assert reader.get("/usages?project_id=p2", headers=headers).status_code == 403
    # policy comes before the schema: a non-admin without project_id is refused
    assert reader.get("/usages", headers=headers).status_code == 403
    assert reader.get("/usages?project_id=p1",
                      headers={"X-Roles": "member"}).status_code == 403
    assert make_api().get("/usages").status_code == 400


def test_usages_all_and_unknown_in_capitals_are_ordinary_type_names(api, world):
    upper = make_consumer(project="p1", user="u1", consumer_type="UNKNOWN")
    allocate(upper, world["cn"], VCPU=1)
    assert api.get("/usages?project_id=p1&consumer_type=UNKNOWN").json() == {"usages": {
        "UNKNOWN": {"consumer_count": 1, "VCPU": 1}}}
    assert api.get("/usages?project_id=p1&consumer_type=ALL").json() == {"usages": {}}
    grouped = api.get("/usages?project_id=p1").json()["usages"]
    assert grouped["unknown"] == {"consumer_count": 1, "DISK_GB": 7}
    assert grouped["UNKNOWN"] == {"consumer_count": 1, "VCPU": 1}


def test_usages_accept_is_checked_before_policy_and_version_first(make_api, world):
    resp = make_api(token="user").get("/usages?project_id=p1",
                                      headers={"Accept": "text/plain"})
    assert resp.status_code == 406
    resp = make_api(token="user").get("/usages?project_id=p1", version="1.8",
                                      headers={"Accept": "text/plain"})
    assert resp.status_code == 404


def test_usages_repeated_parameter_uses_last_value(api, world):
    assert api.get("/usages?project_id=p2&project_id=p1", version="1.9").json() == {
        "usages": {"VCPU": 7, "MEMORY_MB": 512, "DISK_GB": 17}}
    resp = api.get("/usages?project_id=p1&project_id=", version="1.9")
    assert resp.status_code == 400


def test_provider_allocations_headers_and_checks(api, world):
    path = f"/resource_providers/{world['cn'].uuid}/allocations"
    resp = api.get(path)
    assert resp["Cache-Control"] == "no-cache" and resp["Last-Modified"].endswith("GMT")
    old = api.get(path, version="1.14")
    assert "Cache-Control" not in old and "Last-Modified" not in old
    assert old.json()["resource_provider_generation"] == 6
    assert api.get(path, headers={"Accept": "text/plain"}).status_code == 406
    assert api.get(path, token="user").status_code == 403
    resp = api.put(path, {})
    assert resp.status_code == 405 and resp["Allow"] == "GET"
