"""/resource_providers/{uuid}/aggregates and /resource_providers/{uuid}/traits."""
import json
import uuid as uuidlib

import pytest

from providers.models import Aggregate, ProviderTrait, ResourceProvider
from tests.conftest import error_code, error_detail
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

AGG_A = "aaaaaaaa-0000-4000-8000-000000000001"
AGG_B = "bbbbbbbb-0000-4000-8000-000000000002"


@pytest.fixture
def rp(db):
    return make_provider("cn")


def gen(rp):
    return ResourceProvider.objects.get(pk=rp.pk).generation


def aggs(rp):
    return f"/resource_providers/{rp.uuid}/aggregates"


def traits(rp):
    return f"/resource_providers/{rp.uuid}/traits"


# --- aggregates --------------------------------------------------------------------

def test_aggregates_not_before_1_1(api, rp):
    assert api.get(aggs(rp), version="1.0").status_code == 404
    assert api.put(aggs(rp), [AGG_A], version="1.0").status_code == 404


def test_aggregates_media_check_before_version(api, rp):
    resp = api.put(aggs(rp), raw="[]", content_type="text/plain", version="1.0")
    assert resp.status_code == 415
    resp = api.get(aggs(rp), headers={"Accept": "text/plain"}, version="1.0")
    assert resp.status_code == 406


def test_aggregates_list_form_before_1_19(api, rp):
    resp = api.put(aggs(rp), [AGG_A, AGG_B], version="1.18")
    assert resp.status_code == 200
    assert resp.json() == {"aggregates": [AGG_A, AGG_B]}
    assert resp["Cache-Control"] == "no-cache"
    assert gen(rp) == 0  # never bumped before 1.19
    assert sorted(api.get(aggs(rp), version="1.1").json()["aggregates"]) == [AGG_A, AGG_B]
    assert "Cache-Control" not in api.get(aggs(rp), version="1.14").headers
    resp = api.put(aggs(rp), {"aggregates": [], "resource_provider_generation": 0},
                   version="1.18")
    assert resp.status_code == 400


def test_aggregates_generation_form_from_1_19(api, rp):
    resp = api.put(aggs(rp), {"aggregates": [AGG_B, AGG_A], "resource_provider_generation": 0})
    assert resp.json() == {"aggregates": [AGG_B, AGG_A], "resource_provider_generation": 1}
    # unchanged set still bumps
    resp = api.put(aggs(rp), {"aggregates": [AGG_B, AGG_A], "resource_provider_generation": 1})
    assert resp.json()["resource_provider_generation"] == 2
    resp = api.put(aggs(rp), {"aggregates": [AGG_A], "resource_provider_generation": 1})
    assert resp.status_code == 409
    assert error_code(resp) == "placement.concurrent_update"
    assert "Resource provider's generation already changed." in error_detail(resp)
    resp = api.put(aggs(rp), {"aggregates": [AGG_A], "resource_provider_generation": 2})
    assert api.get(aggs(rp)).json() == {"aggregates": [AGG_A],
                                        "resource_provider_generation": 3}
    assert Aggregate.objects.count() == 2  # aggregates are never deleted
    assert api.put(aggs(rp), [AGG_A]).status_code == 400


@pytest.mark.parametrize("body,message", [
    (["nope"], "is not a 'uuid'"),
    ([AGG_A, AGG_A], "has non-unique elements"),
])
def test_aggregates_bad_items(api, rp, body, message):
    resp = api.put(aggs(rp), body, version="1.18")
    assert resp.status_code == 400
    assert message in error_detail(resp)


def test_aggregates_stored_as_sent(api, rp):
    dashless = AGG_A.replace("-", "")
    api.put(aggs(rp), [dashless], version="1.18")
    assert api.get(aggs(rp)).json()["aggregates"] == [dashless]
    assert api.get(f"/resource_providers?member_of={AGG_A}").json()[
        "resource_providers"] == []


def test_aggregates_unknown_provider(api):
    assert api.get("/resource_providers/nope/aggregates", version="1.1").status_code == 404
    assert api.put("/resource_providers/nope/aggregates", ["x"], version="1.1"
                   ).status_code == 404


def test_aggregates_body_larger_than_django_default_limit(api, rp):
    aggregates = [str(uuidlib.uuid4()) for _ in range(3)]
    raw = json.dumps({"aggregates": aggregates, "resource_provider_generation": 0})
    resp = api.put(aggs(rp), raw=raw + " " * 3_000_000)
    assert resp.status_code == 200, resp.content[:300]
    assert sorted(api.get(aggs(rp)).json()["aggregates"]) == sorted(aggregates)


# --- provider traits ------------------------------------------------------------------

def test_traits_not_before_1_6(api, rp):
    assert api.get(traits(rp), version="1.5").status_code == 404
    assert api.delete(traits(rp), version="1.5").status_code == 404


def test_traits_replace(api, rp):
    resp = api.get(traits(rp), version="1.15")
    assert resp.json() == {"traits": [], "resource_provider_generation": 0}
    assert resp["Last-Modified"].endswith("GMT")
    body = {"traits": ["HW_CPU_X86_AVX", "HW_CPU_X86_SSE", "HW_CPU_X86_AVX"],
            "resource_provider_generation": 0}
    resp = api.put(traits(rp), body, version="1.15")
    assert resp.status_code == 200
    assert sorted(resp.json()["traits"]) == ["HW_CPU_X86_AVX", "HW_CPU_X86_SSE"]
    assert resp.json()["resource_provider_generation"] == 1
    assert resp["Cache-Control"] == "no-cache"
    # the same set again: no bump
    body["resource_provider_generation"] = 1
    assert api.put(traits(rp), body).json()["resource_provider_generation"] == 1
    resp = api.put(traits(rp), {"traits": ["HW_CPU_X86_SSE"], "resource_provider_generation": 1})
    assert resp.json() == {"traits": ["HW_CPU_X86_SSE"], "resource_provider_generation": 2}


def test_traits_errors_in_order(api, rp):
    # schema before provider lookup
    resp = api.put("/resource_providers/nope/traits", {"traits": []})
    assert resp.status_code == 400
    resp = api.put("/resource_providers/nope/traits",
                   {"traits": [], "resource_provider_generation": 0})
    assert resp.status_code == 404
    resp = api.put(traits(rp), {"traits": ["CUSTOM_NOPE"], "resource_provider_generation": 3})
    assert resp.status_code == 409  # generation before names
    assert error_code(resp) == "placement.concurrent_update"
    resp = api.put(traits(rp), {"traits": ["CUSTOM_NOPE", "CUSTOM_ALSO"],
                                "resource_provider_generation": 0})
    assert resp.status_code == 400
    assert "No such trait CUSTOM_ALSO, CUSTOM_NOPE" in error_detail(resp)
    resp = api.put(traits(rp), {"traits": [""], "resource_provider_generation": 0})
    assert resp.status_code == 400
    assert api.put(traits(rp), raw="{}", content_type="text/plain").status_code == 415
    assert gen(rp) == 0


def test_traits_delete(api, rp):
    assert api.delete(traits(rp)).status_code == 204
    assert gen(rp) == 0  # nothing to remove: no bump
    api.put(traits(rp), {"traits": ["HW_CPU_X86_AVX"], "resource_provider_generation": 0})
    assert api.delete(traits(rp)).status_code == 204
    assert gen(rp) == 2
    assert not ProviderTrait.objects.exists()
    assert api.delete("/resource_providers/nope/traits").status_code == 404


def test_traits_allow(api, rp):
    assert api.post(traits(rp), {})["Allow"] == "GET, PUT, DELETE"
    assert api.post(aggs(rp), {})["Allow"] == "GET, PUT"
