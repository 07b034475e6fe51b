"""Cache-Control / Last-Modified on exactly the responses listed in http.md §7 (1.15+)."""
import pytest

from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db

RP = "/resource_providers/{uuid}"
# (method, path, body, status, cached at 1.15+)
CALLS = [
    ("GET", "/resource_providers", None, 200, True),
    ("POST", "/resource_providers", {"name": "new"}, 200, True),
    ("GET", RP, None, 200, True),
    ("PUT", RP, {"name": "renamed"}, 200, True),
    ("GET", RP + "/inventories", None, 200, True),
    ("PUT", RP + "/inventories",
     {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 2}}}, 200, True),
    ("POST", RP + "/inventories", {"resource_class": "DISK_GB", "total": 2}, 201, True),
    ("GET", RP + "/inventories/VCPU", None, 200, True),
    ("PUT", RP + "/inventories/VCPU", {"resource_provider_generation": 0, "total": 3}, 200,
     True),
    ("DELETE", RP + "/inventories/MEMORY_MB", None, 204, False),
    ("DELETE", RP + "/inventories", None, 204, False),
    ("GET", RP + "/aggregates", None, 200, True),
    ("PUT", RP + "/aggregates",
     {"aggregates": [], "resource_provider_generation": 0}, 200, True),
    ("GET", RP + "/traits", None, 200, True),
    ("PUT", RP + "/traits", {"traits": [], "resource_provider_generation": 0}, 200, True),
    ("DELETE", RP + "/traits", None, 204, False),
    ("GET", "/traits", None, 200, True),
    ("GET", "/traits/HW_CPU_X86_AVX", None, 204, True),
    ("PUT", "/traits/CUSTOM_T", None, 201, True),
    ("PUT", "/traits/CUSTOM_OLD", None, 204, True),
    ("GET", "/resource_classes", None, 200, True),
    ("GET", "/resource_classes/VCPU", None, 200, True),
    ("POST", "/resource_classes", {"name": "CUSTOM_NEW"}, 201, False),
    ("PUT", "/resource_classes/CUSTOM_NEW", None, 201, False),
    ("PUT", "/resource_classes/CUSTOM_OLD", None, 204, False),
    ("DELETE", "/resource_classes/CUSTOM_OLD", None, 204, False),
    ("DELETE", RP, None, 204, False),
]


@pytest.fixture
def rp(api):
    api.put("/resource_classes/CUSTOM_OLD")
    api.put("/traits/CUSTOM_OLD")
    provider = make_provider("rp", inventory={"VCPU": 1, "MEMORY_MB": 8})
    allocate(make_consumer(), make_provider("busy", inventory={"VCPU": 1}), VCPU=1)
    return provider


@pytest.mark.parametrize("version", ["1.14", "1.15", "1.39"])
@pytest.mark.parametrize("method,path,body,status,cached", CALLS)
def test_cache_headers(api, rp, version, method, path, body, status, cached):
    if "generation" in str(body):
        body = dict(body, resource_provider_generation=rp.generation)
    if version != "1.39" and method == "POST" and path == "/resource_providers":
        status, cached = 201, False  # no body, no cache headers below 1.20
    if version != "1.39" and method == "PUT" and path.endswith("/aggregates"):
        body = []  # a bare list below 1.19
    resp = api.request(method, path.format(uuid=rp.uuid), body, version=version)
    assert resp.status_code == status, resp.content
    cached = cached and version != "1.14"
    assert ("Cache-Control" in resp) == cached
    assert ("Last-Modified" in resp) == cached
    if cached:
        assert resp["Cache-Control"] == "no-cache"
        assert resp["Last-Modified"].endswith(" GMT")
