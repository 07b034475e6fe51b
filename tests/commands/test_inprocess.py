"""The in-process entry point goes through the real middleware, routing and policy."""
import pytest
from django.db import transaction

from placement_site.inprocess import PlacementClient
from providers.models import Trait
from tests.api.test_keystone import authtoken_options


@pytest.fixture
def client(db):
    return PlacementClient()


def test_get_root_reports_versions(client):
    status, headers, body = client.get("/")
    assert status == 200
    assert body["versions"][0]["max_version"] == "1.39"
    assert headers["OpenStack-API-Version"] == "placement 1.39"
    assert headers["x-openstack-request-id"].startswith("req-")


def test_microversion_is_negotiated(client):
    result = client.get("/traits", version="1.5")
    assert result.status == 404
    result = client.get("/traits", version="1.6")
    assert result.status == 200 and "HW_CPU_X86_AVX" in result.body["traits"]
    result = client.get("/", version="2.0")
    assert result.status == 406


def test_put_creates_and_errors_are_decoded(client):
    result = client.put("/traits/CUSTOM_INPROC")
    assert result.status == 201
    assert result.headers["Location"].endswith("/traits/CUSTOM_INPROC")
    assert Trait.objects.filter(name="CUSTOM_INPROC").exists()
    result = client.put("/traits/lower")
    assert result.status == 400
    assert "The trait is invalid" in result.error_detail()
    assert result.error_code() == "placement.undefined_code"


def test_policy_applies_to_tokens(db):
    assert PlacementClient(token="someone").get("/traits").status == 403
    assert PlacementClient(token="someone", roles=["service"]).get("/traits").status == 200
    assert PlacementClient(token=None).get("/traits").status == 401


def test_body_schema_validation_is_the_apis(client):
    result = client.post("/resource_classes", {"name": "CUSTOM_X", "extra": 1})
    assert result.status == 400
    assert "JSON does not validate" in result.error_detail()
    result = client.post("/resource_classes", b"{not json")
    assert result.status == 400


def test_calls_join_the_callers_transaction(client):
    with transaction.atomic():
        assert client.put("/traits/CUSTOM_ROLLED_BACK").status == 201
        assert Trait.objects.filter(name="CUSTOM_ROLLED_BACK").exists()
        transaction.set_rollback(True)
    assert not Trait.objects.filter(name="CUSTOM_ROLLED_BACK").exists()
    # the connection is still usable after the request cycle
    assert client.get("/traits/HW_CPU_X86_AVX").status == 204


def test_identity_also_works_with_the_keystone_strategy(db, settings):
    settings.PLACEMENT_AUTH_STRATEGY = "keystone"
    with authtoken_options(settings):
        assert PlacementClient().get("/traits").status == 200
        assert PlacementClient(token="someone").get("/traits").status == 403
        # no identity: auth_token's refusal, as for a request without a token
        assert PlacementClient(token=None).get("/traits").status == 401
