"""Every provider, inventory, aggregate, trait and resource class endpoint checks its
own policy rule (policy.md §3), after version gating and the media checks."""
import pytest

from providers.models import Inventory, ResourceClass, ResourceProvider
from tests.conftest import error_detail
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

RP = "/resource_providers/{uuid}"
ENDPOINTS = [
    ("GET", "/resource_providers", "placement:resource_providers:list"),
    ("POST", "/resource_providers", "placement:resource_providers:create"),
    ("GET", RP, "placement:resource_providers:show"),
    ("PUT", RP, "placement:resource_providers:update"),
    ("DELETE", RP, "placement:resource_providers:delete"),
    ("GET", RP + "/inventories", "placement:resource_providers:inventories:list"),
    ("POST", RP + "/inventories", "placement:resource_providers:inventories:create"),
    ("PUT", RP + "/inventories", "placement:resource_providers:inventories:update"),
    ("DELETE", RP + "/inventories", "placement:resource_providers:inventories:delete"),
    ("GET", RP + "/inventories/VCPU", "placement:resource_providers:inventories:show"),
    ("PUT", RP + "/inventories/VCPU", "placement:resource_providers:inventories:update"),
    ("DELETE", RP + "/inventories/VCPU", "placement:resource_providers:inventories:delete"),
    ("GET", RP + "/aggregates", "placement:resource_providers:aggregates:list"),
    ("PUT", RP + "/aggregates", "placement:resource_providers:aggregates:update"),
    ("GET", RP + "/traits", "placement:resource_providers:traits:list"),
    ("PUT", RP + "/traits", "placement:resource_providers:traits:update"),
    ("DELETE", RP + "/traits", "placement:resource_providers:traits:delete"),
    ("GET", "/traits", "placement:traits:list"),
    ("GET", "/traits/CUSTOM_X", "placement:traits:show"),
    ("PUT", "/traits/CUSTOM_X", "placement:traits:update"),
    ("DELETE", "/traits/CUSTOM_X", "placement:traits:delete"),
    ("GET", "/resource_classes", "placement:resource_classes:list"),
    ("POST", "/resource_classes", "placement:resource_classes:create"),
    ("GET", "/resource_classes/VCPU", "placement:resource_classes:show"),
    ("PUT", "/resource_classes/CUSTOM_X", "placement:resource_classes:update"),
    ("DELETE", "/resource_classes/CUSTOM_X", "placement:resource_classes:delete"),
]


@pytest.mark.parametrize("method,path,rule", ENDPOINTS)
def test_each_endpoint_checks_its_rule(api, method, path, rule):
    rp = make_provider("rp", inventory={"VCPU": 1})  # generation 1
    resp = api.request(method, path.format(uuid=rp.uuid), body={}, token="user")
    assert resp.status_code == 403, resp.content
    assert f"Policy does not allow {rule} to be performed." in error_detail(resp)
    # nothing was written or deleted
    assert ResourceProvider.objects.filter(pk=rp.pk, generation=1).exists()
    assert Inventory.objects.filter(provider=rp).count() == 1
    assert not ResourceClass.objects.filter(name="CUSTOM_X").exists()


def test_version_gate_and_media_checks_come_before_policy(api):
    rp = make_provider("rp")
    assert api.get(f"/resource_providers/{rp.uuid}/traits", version="1.5",
                   token="user").status_code == 404
    assert api.get("/resource_classes", version="1.1", token="user").status_code == 404
    assert api.get("/resource_providers", headers={"Accept": "text/plain"},
                   token="user").status_code == 406
    assert api.post("/resource_providers", raw="x", content_type="text/plain",
                    token="user").status_code == 415
    assert api.delete(f"/resource_providers/{rp.uuid}/inventories", version="1.4",
                      token="user").status_code == 405
