"""/resource_providers and /resource_providers/{uuid} through the HTTP API."""
import uuid as uuidlib

import pytest

from providers.models import ResourceProvider
from tests.conftest import error_code, error_detail
from tests.factories import allocate, make_consumer, make_provider
from tests.providers.tree_checks import assert_tree_integrity

pytestmark = pytest.mark.django_db


def new_uuid():
    return str(uuidlib.uuid4())


def create(api, name, version="1.39", **body):
    resp = api.post("/resource_providers", {"name": name, **body}, version=version)
    assert resp.status_code in (200, 201), resp.content
    return resp


def show(api, uuid, version="1.39"):
    resp = api.get(f"/resource_providers/{uuid}", version=version)
    assert resp.status_code == 200, resp.content
    return resp.json()


# --- POST -----------------------------------------------------------------------

def test_create_below_1_20_is_201_without_body(api):
    uuid = new_uuid()
    resp = create(api, "rp", version="1.19", uuid=uuid)
    assert resp.status_code == 201
    assert resp.content == b""
    assert "Content-Type" not in resp.headers
    assert resp["Location"] == f"http://testserver/resource_providers/{uuid}"
    assert "Last-Modified" not in resp.headers


def test_create_from_1_20_is_200_with_representation(api):
    resp = create(api, "rp", version="1.20")
    assert resp.status_code == 200
    body = resp.json()
    assert body["generation"] == 0
    assert body["root_provider_uuid"] == body["uuid"]
    assert body["parent_provider_uuid"] is None
    assert resp["Location"].endswith(f"/resource_providers/{body['uuid']}")
    assert resp["Cache-Control"] == "no-cache"
    assert resp["Last-Modified"].endswith(" GMT")


def test_create_normalizes_uuid_and_generates_missing_one(api):
    body = create(api, "a", uuid="2290D4AF9E6E400B9D651EE01376F71A").json()
    assert body["uuid"] == "2290d4af-9e6e-400b-9d65-1ee01376f71a"
    generated = create(api, "b").json()["uuid"]
    assert str(uuidlib.UUID(generated)) == generated


@pytest.mark.parametrize("body,message", [
    ({"name": ""}, "Object action create failed because: name is required"),
    ({"name": "x", "uuid": "not-a-uuid"}, "is not a 'uuid'"),
    ({"name": "x" * 201}, "JSON does not validate"),
    ({}, "'name' is a required property"),
    ({"name": "x", "generation": 1}, "Additional properties are not allowed"),
])
def test_create_bad_body(api, body, message):
    resp = api.post("/resource_providers", body)
    assert resp.status_code == 400
    assert message in error_detail(resp)


@pytest.mark.parametrize("raw", ['{"name": "a\\ud800b"}', '{"name": "a", "\\udfff": 1}'])
def test_unpaired_surrogate_is_refused_not_500(api, raw):
    resp = api.post("/resource_providers", raw=raw)
    assert resp.status_code == 400
    assert "unpaired surrogate characters are not allowed" in error_detail(resp)
    assert not ResourceProvider.objects.exists()


@pytest.mark.parametrize("depth,message", [
    (30, "is not of type 'string'"),
    (40, "JSON does not validate: nested deeper than 32 levels"),
    (100000, "Malformed JSON: maximum recursion depth exceeded"),
])
def test_deeply_nested_body_is_refused_not_500(api, depth, message):
    resp = api.post("/resource_providers", raw='{"name": ' + "[" * depth + "]" * depth + "}")
    assert resp.status_code == 400
    assert message in error_detail(resp)


def test_create_parent_not_accepted_before_1_14(api):
    parent = create(api, "p").json()["uuid"]
    resp = api.post("/resource_providers", {"name": "c", "parent_provider_uuid": parent},
                    version="1.13")
    assert resp.status_code == 400
    assert "Additional properties are not allowed" in error_detail(resp)


def test_create_child_root_is_parents_root(api):
    root = create(api, "root").json()["uuid"]
    mid = create(api, "mid", parent_provider_uuid=root).json()["uuid"]
    leaf = create(api, "leaf", parent_provider_uuid=mid).json()
    assert leaf["parent_provider_uuid"] == mid
    assert leaf["root_provider_uuid"] == root


def test_create_bad_parent(api):
    uuid = new_uuid()
    resp = api.post("/resource_providers",
                    {"name": "c", "uuid": uuid, "parent_provider_uuid": uuid})
    assert resp.status_code == 400
    assert "parent provider UUID cannot be same as UUID" in error_detail(resp)
    resp = api.post("/resource_providers", {"name": "c", "parent_provider_uuid": new_uuid()})
    assert resp.status_code == 400
    assert "parent provider UUID does not exist." in error_detail(resp)
    assert not ResourceProvider.objects.exists()


def test_create_duplicates_are_409(api):
    uuid = new_uuid()
    create(api, "rp", uuid=uuid)
    resp = api.post("/resource_providers", {"name": "rp"})
    assert resp.status_code == 409
    assert error_code(resp) == "placement.duplicate_name"
    assert "Conflicting resource provider name: rp already exists." in error_detail(resp)
    resp = api.post("/resource_providers",
                    {"name": "other", "uuid": uuid.replace("-", "").upper()})
    assert resp.status_code == 409
    assert f"Conflicting resource provider uuid: {uuid} already exists." in error_detail(resp)


def test_create_needs_json_content_type_and_admin(api, make_api):
    resp = api.post("/resource_providers", raw="name=x", content_type="text/plain")
    assert resp.status_code == 415
    resp = make_api(token="user").post("/resource_providers", {"name": "x"})
    assert resp.status_code == 403


# --- representation --------------------------------------------------------------

@pytest.mark.parametrize("version,rels", [
    ("1.0", ["self", "inventories", "usages"]),
    ("1.1", ["self", "inventories", "usages", "aggregates"]),
    ("1.5", ["self", "inventories", "usages", "aggregates"]),
    ("1.6", ["self", "inventories", "usages", "aggregates", "traits"]),
    ("1.10", ["self", "inventories", "usages", "aggregates", "traits"]),
    ("1.11", ["self", "inventories", "usages", "aggregates", "traits", "allocations"]),
])
def test_links_per_version(api, version, rels):
    uuid = create(api, "rp").json()["uuid"]
    body = show(api, uuid, version)
    assert [link["rel"] for link in body["links"]] == rels
    base = f"/resource_providers/{uuid}"
    assert body["links"][0]["href"] == base
    assert body["links"][1]["href"] == base + "/inventories"


def test_fields_per_version(api):
    uuid = create(api, "rp").json()["uuid"]
    assert set(show(api, uuid, "1.13")) == {"uuid", "name", "generation", "links"}
    assert set(show(api, uuid, "1.14")) == {"uuid", "name", "generation", "links",
                                            "parent_provider_uuid", "root_provider_uuid"}


def test_get_cache_headers_from_1_15(api):
    uuid = create(api, "rp").json()["uuid"]
    old = api.get(f"/resource_providers/{uuid}", version="1.14")
    assert "Last-Modified" not in old.headers and "Cache-Control" not in old.headers
    new = api.get(f"/resource_providers/{uuid}", version="1.15")
    assert new["Cache-Control"] == "no-cache"
    assert new["Last-Modified"].endswith(" GMT")


def test_get_unknown_and_case_sensitive(api):
    uuid = create(api, "rp").json()["uuid"]
    resp = api.get(f"/resource_providers/{uuid.upper()}")
    assert resp.status_code == 404
    assert f"No resource provider with uuid {uuid.upper()} found" in error_detail(resp)


def test_get_refuses_non_json_accept(api):
    uuid = create(api, "rp").json()["uuid"]
    resp = api.get(f"/resource_providers/{uuid}", headers={"Accept": "text/plain"})
    assert resp.status_code == 406


def test_methods_and_trailing_slash(api):
    resp = api.request("PATCH", f"/resource_providers/{new_uuid()}")
    assert resp.status_code == 405
    assert resp["Allow"] == "GET, DELETE, PUT"
    assert api.request("DELETE", "/resource_providers")["Allow"] == "GET, POST"
    assert api.get("/resource_providers/").status_code == 404


# --- PUT ------------------------------------------------------------------------

def test_rename_keeps_generation(api):
    uuid = create(api, "rp").json()["uuid"]
    api.put(f"/resource_providers/{uuid}/traits",
            {"traits": ["HW_CPU_X86_AVX"], "resource_provider_generation": 0})
    resp = api.put(f"/resource_providers/{uuid}", {"name": "renamed"}, version="1.15")
    assert resp.status_code == 200
    assert resp.json()["name"] == "renamed"
    assert resp.json()["generation"] == 1
    assert resp["Cache-Control"] == "no-cache"
    assert "Location" not in resp.headers


def test_rename_empty_allowed_and_duplicate_refused(api):
    uuid = create(api, "a").json()["uuid"]
    create(api, "b")
    resp = api.put(f"/resource_providers/{uuid}", {"name": ""})
    assert resp.status_code == 200 and resp.json()["name"] == ""
    resp = api.put(f"/resource_providers/{uuid}", {"name": "b"})
    assert resp.status_code == 409
    assert error_code(resp) == "placement.duplicate_name"
    assert "Conflicting resource provider b already exists." in error_detail(resp)


def test_update_order_404_before_400(api):
    resp = api.put(f"/resource_providers/{new_uuid()}", {"bogus": 1})
    assert resp.status_code == 404
    uuid = create(api, "a").json()["uuid"]
    resp = api.put(f"/resource_providers/{uuid}", {"name": "x", "uuid": new_uuid()})
    assert resp.status_code == 400


@pytest.fixture
def tree(api):
    """root -> p -> x -> xc ; q is another root."""
    uuids = {}
    uuids["root"] = create(api, "root").json()["uuid"]
    uuids["p"] = create(api, "p", parent_provider_uuid=uuids["root"]).json()["uuid"]
    uuids["x"] = create(api, "x", parent_provider_uuid=uuids["p"]).json()["uuid"]
    uuids["xc"] = create(api, "xc", parent_provider_uuid=uuids["x"]).json()["uuid"]
    uuids["q"] = create(api, "q").json()["uuid"]
    return uuids


def put_parent(api, uuid, parent, version="1.39", name=None):
    return api.put(f"/resource_providers/{uuid}",
                   {"name": name or ResourceProvider.objects.get(uuid=uuid).name,
                    "parent_provider_uuid": parent}, version=version)


@pytest.mark.parametrize("version", ["1.14", "1.36", "1.37"])
def test_same_parent_and_omitted_parent_are_noops(api, tree, version):
    assert put_parent(api, tree["x"], tree["p"], version).status_code == 200
    resp = api.put(f"/resource_providers/{tree['x']}", {"name": "x2"}, version=version)
    assert resp.status_code == 200
    assert resp.json()["parent_provider_uuid"] == tree["p"]


@pytest.mark.parametrize("version", ["1.14", "1.36", "1.37"])
def test_null_parent_on_a_root_is_a_noop(api, tree, version):
    resp = put_parent(api, tree["q"], None, version)
    assert resp.status_code == 200
    assert resp.json()["parent_provider_uuid"] is None
    assert resp.json()["root_provider_uuid"] == tree["q"]


def test_reparent_refused_before_1_37(api, tree):
    resp = put_parent(api, tree["x"], tree["q"], "1.36")
    assert resp.status_code == 400
    assert "re-parenting a provider is not currently allowed." in error_detail(resp)
    resp = put_parent(api, tree["x"], tree["xc"], "1.36")
    assert "re-parenting a provider is not currently allowed." in error_detail(resp)
    resp = put_parent(api, tree["x"], None, "1.36")
    assert resp.status_code == 400
    assert "un-parenting a provider is not currently allowed." in error_detail(resp)


def test_reparent_moves_subtree_roots(api, tree):
    resp = put_parent(api, tree["x"], tree["q"], "1.37")
    assert resp.status_code == 200
    assert resp.json()["root_provider_uuid"] == tree["q"]
    assert show(api, tree["xc"])["root_provider_uuid"] == tree["q"]
    assert show(api, tree["p"])["root_provider_uuid"] == tree["root"]
    rows = api.get(f"/resource_providers?in_tree={tree['q']}").json()["resource_providers"]
    assert sorted(r["name"] for r in rows) == ["q", "x", "xc"]
    assert_tree_integrity()


def test_unparent_makes_subtree_a_tree(api, tree):
    resp = put_parent(api, tree["x"], None, "1.37")
    assert resp.status_code == 200
    body = resp.json()
    assert body["parent_provider_uuid"] is None and body["root_provider_uuid"] == tree["x"]
    assert show(api, tree["xc"])["root_provider_uuid"] == tree["x"]
    assert_tree_integrity()


def test_root_may_get_a_parent_from_1_14(api, tree):
    resp = put_parent(api, tree["q"], tree["xc"], "1.14")
    assert resp.status_code == 200
    assert resp.json()["root_provider_uuid"] == tree["root"]
    assert_tree_integrity()


def test_root_with_children_moves_its_whole_tree(api, tree):
    qc = create(api, "qc", parent_provider_uuid=tree["q"]).json()["uuid"]
    resp = put_parent(api, tree["q"], tree["p"], "1.14")
    assert resp.status_code == 200
    assert show(api, qc)["root_provider_uuid"] == tree["root"]
    rows = api.get(f"/resource_providers?in_tree={qc}").json()["resource_providers"]
    assert sorted(r["name"] for r in rows) == ["p", "q", "qc", "root", "x", "xc"]
    assert_tree_integrity()


def test_move_within_the_same_tree_and_back(api, tree):
    assert put_parent(api, tree["xc"], tree["root"]).status_code == 200
    assert show(api, tree["xc"])["parent_provider_uuid"] == tree["root"]
    assert show(api, tree["xc"])["root_provider_uuid"] == tree["root"]
    assert_tree_integrity()
    assert put_parent(api, tree["xc"], tree["x"]).status_code == 200
    assert api.delete(f"/resource_providers/{tree['x']}").status_code == 409
    assert_tree_integrity()


def test_failed_update_changes_nothing(api, tree):
    resp = put_parent(api, tree["x"], tree["q"], name="q")  # duplicate name, after the move
    assert resp.status_code == 409
    body = show(api, tree["x"])
    assert body["name"] == "x" and body["parent_provider_uuid"] == tree["p"]
    assert show(api, tree["xc"])["root_provider_uuid"] == tree["root"]
    assert_tree_integrity()


@pytest.mark.parametrize("target", ["x", "xc"])
def test_loop_refused(api, tree, target):
    resp = put_parent(api, tree["x"], tree[target], "1.37")
    assert resp.status_code == 400
    assert "creating loop in the provider tree is not allowed." in error_detail(resp)
    resp = put_parent(api, tree["root"], tree[target], "1.14")
    assert "creating loop in the provider tree is not allowed." in error_detail(resp)


def test_reparent_to_missing_parent(api, tree):
    resp = put_parent(api, tree["x"], new_uuid())
    assert resp.status_code == 400
    assert "Object action create failed because: parent provider UUID does not exist." in (
        error_detail(resp))


def test_parent_change_keeps_generation_and_data(api, tree):
    api.put(f"/resource_providers/{tree['x']}/inventories",
            {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 4}}})
    put_parent(api, tree["x"], tree["q"])
    assert show(api, tree["x"])["generation"] == 1
    inv = api.get(f"/resource_providers/{tree['x']}/inventories").json()
    assert inv["inventories"]["VCPU"]["total"] == 4


# --- DELETE ------------------------------------------------------------------------

def test_delete(api, tree):
    assert api.delete(f"/resource_providers/{tree['q']}").status_code == 204
    assert api.get(f"/resource_providers/{tree['q']}").status_code == 404
    resp = api.delete(f"/resource_providers/{tree['q']}")
    assert resp.status_code == 404
    assert "found for delete" in error_detail(resp)


def test_delete_parent_refused(api, tree):
    resp = api.delete(f"/resource_providers/{tree['x']}")
    assert resp.status_code == 409
    assert error_code(resp) == "placement.resource_provider.cannot_delete_parent"
    assert "It has child resource providers." in error_detail(resp)
    assert api.delete(f"/resource_providers/{tree['xc']}").status_code == 204
    assert api.delete(f"/resource_providers/{tree['x']}").status_code == 204
    assert_tree_integrity()


def test_delete_in_use_refused(api):
    rp = make_provider("rp", inventory={"VCPU": 8}, traits=["CUSTOM_T"],
                       aggregates=[new_uuid()])
    consumer = make_consumer()
    allocate(consumer, rp, VCPU=1)
    resp = api.delete(f"/resource_providers/{rp.uuid}")
    assert resp.status_code == 409
    assert error_code(resp) == "placement.resource_provider.inuse"
    assert "Resource provider has allocations." in error_detail(resp)
    consumer.allocations.all().delete()
    assert api.delete(f"/resource_providers/{rp.uuid}").status_code == 204

