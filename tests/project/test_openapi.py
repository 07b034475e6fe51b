"""The OpenAPI document: one source with the route table and the validation schemas;
its response schemas hold for real responses (tests/conftest.py checks every response
at the latest microversion; the scenario below reaches every operation)."""
import json
import uuid
from io import StringIO

import jsonschema
import pytest
from django.core.management import call_command
from django.test import Client

from allocations import payloads as allocation_schemas
from allocations.payloads import reshaper_schema
from candidates.request import query_schema
from foundation.api import microversion
from placement_site import openapi
from providers.api import schemas as provider_schemas
from tests.openapi_check import response_problem

LATEST = microversion.MAX


@pytest.fixture(scope="module")
def document():
    return openapi.document()


def test_every_route_and_method_is_documented_and_nothing_else(document):
    routes = {(path, method) for path, methods in openapi.routes() for method in methods}
    documented = {(path, method) for path, operations in document["paths"].items()
                  for method in operations}
    assert documented == routes == set(openapi.OPERATIONS)
    assert len(routes) == 36


def test_request_schemas_are_the_ones_the_views_validate_with(document):
    def body(path, method):
        return document["paths"][path][method]["requestBody"]["content"][
            "application/json"]["schema"]

    assert body("/reshaper", "post") is reshaper_schema(LATEST)
    assert body("/allocations/{consumer_uuid}", "put") is allocation_schemas.put_schema(LATEST)
    assert body("/allocations", "post") is allocation_schemas.post_schema(LATEST)
    assert (body("/resource_providers/{uuid}/inventories", "put")
            is provider_schemas.PUT_INVENTORIES_SCHEMA)
    parameters = document["paths"]["/allocation_candidates"]["get"]["parameters"]
    schema = query_schema(LATEST)
    assert {p["name"] for p in parameters if p["in"] == "query"} == set(
        schema["properties"]) | {"resources", "required", "member_of", "in_tree"}
    usages = document["paths"]["/usages"]["get"]["parameters"]
    assert [p["name"] for p in usages if p["required"]] == ["project_id"]


def test_every_operation_takes_the_microversion_header(document):
    operations = [(path, method, operation) for path, methods in document["paths"].items()
                  for method, operation in methods.items()]
    assert len(operations) == 36
    for path, method, operation in operations:
        headers = [p for p in operation["parameters"] if p["in"] == "header"]
        assert headers == [openapi.VERSION_HEADER], (path, method)
    assert openapi.VERSION_HEADER["schema"]["enum"] == [f"placement {LATEST}",
                                                        "placement latest"]


@pytest.mark.parametrize("header, status, answered", [
    (f"placement {LATEST}", 200, str(LATEST)),
    ("placement latest", 200, str(LATEST)),
    ("placement 1.0", 200, "1.0"),
    (None, 200, "1.0"),
    ("placement 1.99", 406, None),
    ("placement one", 400, None),
])
def test_the_microversion_header_behaves_as_documented(make_api, header, status, answered):
    """What VERSION_HEADER's description says, on one operation."""
    response = make_api(version=None).get(
        "/resource_providers", headers={"OpenStack-API-Version": header} if header else {})
    assert response.status_code == status, response.content
    if answered:
        assert response["OpenStack-API-Version"] == f"placement {answered}"
    else:
        assert response.json()["errors"][0]["status"] == status


def test_every_schema_is_valid_json_schema(document):
    def schemas():
        yield from document["components"]["schemas"].values()
        for operations in document["paths"].values():
            for operation in operations.values():
                for parameter in operation.get("parameters", ()):
                    yield parameter["schema"]
                if "requestBody" in operation:
                    yield operation["requestBody"]["content"]["application/json"]["schema"]

    for schema in schemas():
        jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.django_db
def test_served_without_token_and_written_by_the_command(document, tmp_path):
    response = Client().get("/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == json.loads(json.dumps(document))
    out = StringIO()
    call_command("openapi", stdout=out)
    assert json.loads(out.getvalue()) == response.json()
    call_command("openapi", "--output", str(tmp_path / "openapi.json"))
    assert json.loads((tmp_path / "openapi.json").read_text()) == response.json()


def test_the_command_refuses_an_unwritable_file(tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="cannot write"):
        call_command("openapi", "--output", str(tmp_path / "missing" / "openapi.json"))


def test_the_checker_catches_a_response_that_breaks_the_document(api):
    response = api.get("/traits")
    response.content = json.dumps({"traits": "not a list"}).encode()
    assert "does not match Traits" in response_problem("GET", "/traits", response)


def test_every_operation_answers_as_documented(api):
    """Each call is checked against the document by the `api` client itself."""
    called = set()

    def call(method, path, template, status, body=None):
        response = api.request(method, path, body)
        assert response.status_code == status, response.content
        called.add((template, method.lower()))
        return response

    rp, child, consumer, other = (str(uuid.uuid4()) for _ in range(4))
    agg = str(uuid.uuid4())
    R = "/resource_providers/{uuid}"
    call("GET", "/", "/", 200)
    call("POST", "/resource_classes", "/resource_classes", 201, {"name": "CUSTOM_GPU"})
    call("GET", "/resource_classes", "/resource_classes", 200)
    call("GET", "/resource_classes/CUSTOM_GPU", "/resource_classes/{name}", 200)
    call("PUT", "/resource_classes/CUSTOM_FPGA", "/resource_classes/{name}", 201)
    call("PUT", "/traits/CUSTOM_FAST", "/traits/{name}", 201)
    call("GET", "/traits/CUSTOM_FAST", "/traits/{name}", 204)
    call("GET", "/traits?name=startswith:CUSTOM", "/traits", 200)
    call("POST", "/resource_providers", "/resource_providers", 200,
         {"name": "cn1", "uuid": rp})
    call("POST", "/resource_providers", "/resource_providers", 200,
         {"name": "child", "uuid": child, "parent_provider_uuid": rp})
    call("GET", f"/resource_providers?in_tree={rp}", "/resource_providers", 200)
    call("GET", f"/resource_providers/{child}", R, 200)
    call("PUT", f"/resource_providers/{child}", R, 200,
         {"name": "child2", "parent_provider_uuid": rp})
    call("POST", f"/resource_providers/{rp}/inventories", R + "/inventories", 201,
         {"resource_class": "VCPU", "total": 8, "resource_provider_generation": 0})
    call("PUT", f"/resource_providers/{rp}/inventories", R + "/inventories", 200,
         {"resource_provider_generation": 1, "inventories": {
             "VCPU": {"total": 8}, "MEMORY_MB": {"total": 1024, "allocation_ratio": 1.5},
             "CUSTOM_GPU": {"total": 2}}})
    call("GET", f"/resource_providers/{rp}/inventories", R + "/inventories", 200)
    inventory = R + "/inventories/{resource_class}"
    call("GET", f"/resource_providers/{rp}/inventories/VCPU", inventory, 200)
    call("PUT", f"/resource_providers/{rp}/inventories/VCPU", inventory, 200,
         {"resource_provider_generation": 2, "total": 16})
    call("DELETE", f"/resource_providers/{rp}/inventories/CUSTOM_GPU", inventory, 204)
    call("PUT", f"/resource_providers/{rp}/aggregates", R + "/aggregates", 200,
         {"aggregates": [agg], "resource_provider_generation": 4})
    call("GET", f"/resource_providers/{rp}/aggregates", R + "/aggregates", 200)
    call("PUT", f"/resource_providers/{rp}/traits", R + "/traits", 200,
         {"traits": ["CUSTOM_FAST", "HW_CPU_X86_AVX"], "resource_provider_generation": 5})
    call("GET", f"/resource_providers/{rp}/traits", R + "/traits", 200)
    allocation = {"allocations": {rp: {"resources": {"VCPU": 2, "MEMORY_MB": 256}}},
                  "project_id": "p1", "user_id": "u1", "consumer_generation": None,
                  "consumer_type": "INSTANCE"}
    call("PUT", f"/allocations/{consumer}", "/allocations/{consumer_uuid}", 204, allocation)
    call("POST", "/allocations", "/allocations", 204, {other: dict(
        allocation, consumer_type="MIGRATION",
        allocations={rp: {"resources": {"VCPU": 1}}})})
    call("GET", f"/allocations/{consumer}", "/allocations/{consumer_uuid}", 200)
    call("GET", f"/resource_providers/{rp}/allocations", R + "/allocations", 200)
    call("GET", f"/resource_providers/{rp}/usages", R + "/usages", 200)
    call("GET", "/usages?project_id=p1", "/usages", 200)
    call("GET", "/allocation_candidates?resources=VCPU:1&required=CUSTOM_FAST"
         "&resources_M=MEMORY_MB:64&group_policy=none&limit=5",
         "/allocation_candidates", 200)
    generation = api.get(f"/resource_providers/{rp}").json()["generation"]
    call("POST", "/reshaper", "/reshaper", 204, {
        "inventories": {rp: {"resource_provider_generation": generation, "inventories": {
            "VCPU": {"total": 16}, "MEMORY_MB": {"total": 1024}}}},
        "allocations": {consumer: dict(allocation, consumer_generation=1)}})
    call("DELETE", f"/allocations/{other}", "/allocations/{consumer_uuid}", 204)
    call("DELETE", f"/allocations/{consumer}", "/allocations/{consumer_uuid}", 204)
    call("DELETE", f"/resource_providers/{rp}/traits", R + "/traits", 204)
    call("DELETE", f"/resource_providers/{rp}/inventories", R + "/inventories", 204)
    call("DELETE", "/traits/CUSTOM_FAST", "/traits/{name}", 204)
    call("DELETE", "/resource_classes/CUSTOM_GPU", "/resource_classes/{name}", 204)
    call("DELETE", f"/resource_providers/{child}", R, 204)
    assert called == set(openapi.OPERATIONS)


def test_links_lead_from_what_creates_to_what_uses_it(document):
    links = document["paths"]["/resource_providers"]["post"]["responses"]["200"]["links"]
    assert links["get_resource_providers_uuid_inventories"] == {
        "operationId": "get_resource_providers_uuid_inventories",
        "parameters": {"uuid": "$response.body#/uuid"}}
    assert "get_resource_providers_uuid_inventories_resource_class" not in links
    operation_ids = {operation["operationId"] for operations in document["paths"].values()
                     for operation in operations.values()}
    for operations in document["paths"].values():
        for operation in operations.values():
            for response in operation["responses"].values():
                assert set(response.get("links", {})) <= operation_ids
