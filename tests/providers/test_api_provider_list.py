"""GET /resource_providers filters through the HTTP API."""
import uuid as uuidlib

import pytest
from django.db.models import F

from providers.models import ResourceProvider
from tests.conftest import error_detail
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db

AGG_A = "aaaaaaaa-0000-4000-8000-000000000001"
AGG_B = "bbbbbbbb-0000-4000-8000-000000000002"
AGG_C = "cccccccc-0000-4000-8000-000000000003"


def names(api, query="", version="1.39", status=200):
    resp = api.get(f"/resource_providers{query}", version=version)
    assert resp.status_code == status, resp.content
    return sorted(rp["name"] for rp in resp.json()["resource_providers"])


def bad(api, query, version="1.39"):
    resp = api.get(f"/resource_providers{query}", version=version)
    assert resp.status_code == 400, resp.content
    return error_detail(resp)


@pytest.fixture
def world(db):
    root = make_provider("root", inventory={"VCPU": 8}, traits=["HW_CPU_X86_AVX"],
                         aggregates=[AGG_A])
    child = make_provider("child", parent=root,
                          inventory={"VCPU": {"total": 4, "max_unit": 2}},
                          traits=["HW_CPU_X86_AVX", "HW_CPU_X86_SSE"], aggregates=[AGG_B])
    other = make_provider("other", inventory={"DISK_GB": 100}, traits=["HW_CPU_X86_SSE"],
                          aggregates=[AGG_A, AGG_B])
    return {"root": root, "child": child, "other": other}


def test_no_filter_and_empty(api):
    assert api.get("/resource_providers").json() == {"resource_providers": []}


def test_list_cache_headers(api, world):
    assert "Last-Modified" not in api.get("/resource_providers", version="1.14").headers
    resp = api.get("/resource_providers", version="1.15")
    assert resp["Cache-Control"] == "no-cache" and resp["Last-Modified"].endswith("GMT")
    resp = api.get("/resource_providers?name=nothing", version="1.15")
    assert resp["Last-Modified"].endswith("GMT")


def test_name_and_uuid(api, world):
    assert names(api, "?name=child") == ["child"]
    assert names(api, f"?uuid={world['other'].uuid}") == ["other"]
    assert names(api, f"?uuid={world['other'].uuid}&name=root") == []
    assert "is not a 'uuid'" in bad(api, "?uuid=nope")
    dashless = world["other"].uuid.replace("-", "")
    assert "is not a 'uuid'" in bad(api, f"?uuid={dashless}")


def test_unicode_name(api):
    make_provider("☃")
    assert names(api, "?name=%E2%98%83") == ["☃"]


def test_unknown_param_and_params_before_their_version(api, world):
    assert "Additional properties are not allowed" in bad(api, "?bogus=1")
    for query, version in [("?member_of=" + AGG_A, "1.2"), ("?resources=VCPU:1", "1.3"),
                           (f"?in_tree={world['root'].uuid}", "1.13"),
                           ("?required=HW_CPU_X86_AVX", "1.17")]:
        assert "Additional properties are not allowed" in bad(api, query, version)


def test_member_of(api, world):
    assert names(api, f"?member_of={AGG_A}", "1.3") == ["other", "root"]
    assert names(api, f"?member_of=in:{AGG_A},{AGG_B}", "1.3") == ["child", "other", "root"]
    assert names(api, f"?member_of={AGG_A}&member_of={AGG_B}", "1.24") == ["other"]
    assert names(api, f"?member_of={AGG_A}&member_of=!{AGG_B}", "1.32") == ["root"]
    assert names(api, f"?member_of=!in:{AGG_A},{AGG_C}", "1.32") == ["child"]
    assert names(api, f"?member_of={AGG_A}&member_of=!{AGG_A}", "1.32") == []
    assert names(api, f"?member_of={AGG_C}") == []
    assert names(api, f"?member_of={AGG_A.upper()}") == []  # exact strings


def test_member_of_errors(api):
    assert "Multiple member_of parameters are not supported" in bad(
        api, f"?member_of={AGG_A}&member_of={AGG_B}", "1.23")
    assert "Forbidden member_of parameters are not supported" in bad(
        api, f"?member_of=!{AGG_A}", "1.31")
    assert "must be prefixed with the 'in:' or '!in:' keyword" in bad(
        api, f"?member_of={AGG_A},{AGG_B}")
    assert "Expected 'member_of' parameter to contain valid UUID(s). Got: x" in bad(
        api, "?member_of=x")


def test_resources_capacity_aware(api, world):
    assert names(api, "?resources=VCPU:2", "1.4") == ["child", "root"]
    assert names(api, "?resources=VCPU:3") == ["root"]  # child max_unit 2
    allocate(make_consumer(), world["root"], VCPU=6)
    assert names(api, "?resources=VCPU:2") == ["child", "root"]
    assert names(api, "?resources=VCPU:3") == []
    assert names(api, "?resources=VCPU:1,DISK_GB:1") == []  # never combined
    assert names(api, "?resources=DISK_GB:100") == ["other"]


def test_resources_errors(api):
    assert "Got: empty string." in bad(api, "?resources=")
    assert "Got: VCPU." in bad(api, "?resources=VCPU")
    assert "expected positive integer amount. Got: x." in bad(api, "?resources=VCPU:x")
    assert "requires amount >= 1. Got: 0." in bad(api, "?resources=VCPU:0")
    assert bad(api, "?resources=NOPE:1").endswith(
        "Invalid resource class in resources parameter: No such resource class NOPE.  ")


def test_in_tree(api, world):
    assert names(api, f"?in_tree={world['child'].uuid}", "1.14") == ["child", "root"]
    assert names(api, f"?in_tree={world['other'].uuid}") == ["other"]
    assert names(api, f"?in_tree={uuidlib.uuid4()}") == []
    assert "is not a 'uuid'" in bad(api, "?in_tree=nope")


def test_required(api, world):
    assert names(api, "?required=HW_CPU_X86_AVX", "1.18") == ["child", "root"]
    assert names(api, "?required=HW_CPU_X86_AVX,HW_CPU_X86_SSE") == ["child"]
    assert names(api, "?required=HW_CPU_X86_AVX,!HW_CPU_X86_SSE", "1.22") == ["root"]
    assert names(api, "?required=!HW_CPU_X86_SSE") == ["root"]
    assert names(api, "?required=in:HW_CPU_X86_AVX,HW_CPU_X86_SSE") == [
        "child", "other", "root"]
    assert names(api, "?required=in:HW_CPU_X86_AVX,HW_CPU_X86_SSE&required=!HW_CPU_X86_AVX"
                 ) == ["other"]
    # below 1.39 only the last occurrence counts
    assert names(api, "?required=HW_CPU_X86_AVX&required=HW_CPU_X86_SSE", "1.38") == [
        "child", "other"]
    assert names(api, "?required=HW_CPU_X86_MMX") == []


def test_required_errors(api):
    assert "Got: !HW_CPU_X86_AVX" in bad(api, "?required=!HW_CPU_X86_AVX", "1.21")
    assert "only supported since microversion 1.39" in bad(
        api, "?required=in:HW_CPU_X86_AVX", "1.38")
    assert "Got an empty trait in: A,," in bad(api, "?required=A,,")
    assert 'Invalid trait(s) in "required" parameter: No such trait(s): CUSTOM_NOPE.' in bad(
        api, "?required=CUSTOM_NOPE")
    assert "No such trait(s): CUSTOM_NOPE." in bad(api, "?required=!CUSTOM_NOPE")


def test_lazy_evaluation_quirk(api, world):
    assert names(api, f"?in_tree={uuidlib.uuid4()}&resources=NOPE:1") == []
    assert names(api, "?required=HW_CPU_X86_MMX&resources=NOPE:1") == []
    assert names(api, f"?member_of={AGG_C}&resources=NOPE:1") == []
    assert "No such resource class NOPE" in bad(api, f"?member_of={AGG_A}&resources=NOPE:1")


def test_evaluation_order(api, world):
    missing = uuidlib.uuid4()
    # syntax: member_of, then required, then resources
    assert "Got: x" in bad(api, "?resources=&required=A,,&member_of=x")
    assert "Got an empty trait in: A,," in bad(api, "?resources=&required=A,,")
    # names: in_tree, required (short-circuits), forbidden, member_of (short-circuits)
    assert names(api, f"?required=CUSTOM_NOPE&in_tree={missing}") == []
    assert names(api, "?required=HW_CPU_X86_MMX,!CUSTOM_NOPE") == []
    assert names(api, "?required=in:HW_CPU_X86_MMX,HW_CPU_X86_3DNOW&resources=NOPE:1") == []
    assert "No such trait(s): CUSTOM_NOPE." in bad(
        api, f"?required=HW_CPU_X86_AVX,!CUSTOM_NOPE&member_of={AGG_C}")
    assert "No such trait(s): CUSTOM_NOPE." in bad(api, f"?required=CUSTOM_NOPE&member_of={AGG_C}")
    # forbidden aggregates and name/uuid never short-circuit
    assert "No such resource class NOPE" in bad(api, f"?member_of=!{AGG_A}&resources=NOPE:1")
    assert "No such resource class NOPE" in bad(api, "?name=nobody&resources=NOPE:1")


def test_last_occurrence_of_non_repeatable_parameters(api, world):
    assert names(api, "?name=root&name=child") == ["child"]
    assert names(api, "?resources=VCPU:8&resources=VCPU:3") == ["root"]
    assert "Got: empty string." in bad(api, "?resources=VCPU:1&resources=")
    assert names(api, f"?in_tree={uuidlib.uuid4()}&in_tree={world['other'].uuid}") == ["other"]
    # below 1.39 only the last `required` counts, so an earlier bad one is never parsed
    assert names(api, "?required=&required=HW_CPU_X86_SSE", "1.38") == ["child", "other"]
    assert "Got an empty trait in: " in bad(api, "?required=&required=HW_CPU_X86_SSE")


def test_more_than_a_thousand_query_parameters(api, world):
    query = "&".join([f"member_of=in:{AGG_A},{AGG_B}"] * 1200)
    assert names(api, "?" + query) == ["child", "other", "root"]


def test_all_filters_together(api, world):
    query = (f"?in_tree={world['root'].uuid}&member_of={AGG_B}&resources=VCPU:1"
             "&required=HW_CPU_X86_SSE&name=child")
    assert names(api, query) == ["child"]


def test_listing_many_providers_is_a_handful_of_queries(api, django_assert_max_num_queries):
    roots = [ResourceProvider(uuid=str(uuidlib.uuid4()), name=f"rp{i}", lft=1, rght=2,
                              tree_id=i + 1, level=0) for i in range(1000)]
    ResourceProvider.objects.bulk_create(roots)
    ResourceProvider.objects.update(root_id=F("id"))
    with django_assert_max_num_queries(6):
        resp = api.get("/resource_providers")
    body = resp.json()["resource_providers"]
    assert len(body) == 1000
    assert all(rp["root_provider_uuid"] == rp["uuid"] for rp in body)
    with django_assert_max_num_queries(8):
        resp = api.get(f"/resource_providers?member_of={AGG_A}&resources=VCPU:1"
                       "&required=HW_CPU_X86_AVX")


@pytest.mark.parametrize("query", ["", "?resources=VCPU:1", "?required=HW_CPU_X86_AVX",
                                   "?member_of=" + AGG_B, "?in_tree=placeholder"])
def test_tree_uuids_in_filtered_and_unfiltered_lists(api, world, query):
    query = query.replace("placeholder", world["root"].uuid)
    resp = api.get(f"/resource_providers{query}")
    assert resp.status_code == 200, resp.content
    listed = {rp["name"]: rp for rp in resp.json()["resource_providers"]}
    child = listed["child"]
    assert child["parent_provider_uuid"] == world["root"].uuid
    assert child["root_provider_uuid"] == world["root"].uuid
    for rp in listed.values():
        if rp["name"] != "child":
            assert rp["parent_provider_uuid"] is None
            assert rp["root_provider_uuid"] == rp["uuid"]
