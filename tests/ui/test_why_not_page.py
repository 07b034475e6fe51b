"""The "why not?" explainer's page and JSON (/ui/candidates/why-not/, why-not.json)."""
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def page(client, q, version="1.39", **extra):
    return client.get(reverse("ui:why-not"), {"q": q, "version": version, **extra})


def as_json(client, q, version="1.39", **extra):
    return client.get(reverse("ui:why-not-json"), {"q": q, "version": version, **extra})


def test_the_blank_page_has_the_form(client):
    response = client.get(reverse("ui:why-not"))
    assert response.status_code == 200
    assert 'name="q"' in response.content.decode() and 'name="tree"' in response.content.decode()


def test_staff_login_is_required(db):
    anonymous = Client()
    for name in ("ui:why-not", "ui:why-not-json"):
        response = anonymous.get(reverse(name), {"q": "resources=VCPU:1", "version": "1.39"})
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    user = get_user_model().objects.create_user("plain", password="pw")
    someone = Client()
    someone.force_login(user)
    response = someone.get(reverse("ui:why-not-json"), {"q": "resources=VCPU:1"})
    assert response.status_code == 302


def test_an_empty_answer_is_explained_per_tree_and_provider(client, sample):
    response = page(client, "resources=VCPU:15")
    assert response.status_code == 200
    trees = {t["root"]["name"]: t for t in response.context["explanation"]["trees"]}
    assert set(trees) == {"cn1", "cn2", "shared-disk"}
    assert not any(t["fits"] for t in trees.values())
    body = response.content.decode()
    assert "VCPU: needs 15, free 2 (capacity 8, used 6)" in body       # cn1-numa0
    assert "VCPU: needs 15, free 8 (capacity 8, used 0)" in body       # cn1-numa1
    assert "VCPU: needs 15, free 14 (capacity 16, used 2)" in body     # cn2
    assert "VCPU:15: none of the 2 provider(s) with VCPU inventory can supply it" in body
    assert "VCPU:15: no provider here has VCPU inventory" in body       # the disk's tree
    assert "excluded" in body and 'class="verdict fits"' not in body
    assert reverse("ui:why-not-json") in body


def test_a_fitting_tree_is_said_to_fit(client, sample):
    response = page(client, "resources=VCPU:1,MEMORY_MB:512&required=HW_CPU_X86_AVX2")
    trees = {t["root"]["name"]: t for t in response.context["explanation"]["trees"]}
    assert trees["cn1"]["fits"] and trees["cn1"]["candidates"] == 2
    assert not trees["cn2"]["fits"]
    assert "missing trait HW_CPU_X86_AVX2" in response.content.decode()


def test_one_tree_by_provider_name(client, sample):
    response = page(client, "resources=VCPU:12", tree="cn1-numa1")
    assert [t["root"]["name"] for t in response.context["explanation"]["trees"]] == ["cn1"]


def test_json_shape(client, sample):
    response = as_json(client, "resources=VCPU:12")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    document = response.json()
    assert set(document) == {"query", "version", "reasons", "page", "fitting_trees", "trees"}
    assert document["query"] == "resources=VCPU:12" and document["version"] == "1.39"
    assert set(document["page"]) == {"number", "per_page", "pages", "trees"}
    tree = next(t for t in document["trees"] if t["root"]["name"] == "cn1")
    assert set(tree) == {"root", "fits", "candidates", "more", "shared_with", "reasons",
                         "providers"}
    numa0 = next(p for p in tree["providers"] if p["name"] == "cn1-numa0")
    assert set(numa0) == {"uuid", "name", "parent_uuid", "depth", "root_uuid", "sharing",
                          "foreign", "reasons"}
    [reason] = numa0["reasons"]
    assert reason == {"kind": "capacity", "group": "",
                      "message": "VCPU: needs 12, free 2 (capacity 8, used 6)",
                      "details": {"resource_class": "VCPU", "requested": 12, "free": 2,
                                  "capacity": 8, "used": 6, "total": 8, "reserved": 0,
                                  "allocation_ratio": 1.0}}


def test_pages_of_trees(client, db):
    for index in range(25):
        make_provider(f"host{index:02}", inventory={"VCPU": 2})
    document = as_json(client, "resources=VCPU:4", page=2).json()
    assert document["page"] == {"number": 2, "per_page": 20, "pages": 2, "trees": 25}
    assert [t["root"]["name"] for t in document["trees"]] == [f"host{i}" for i in range(20, 25)]
    body = page(client, "resources=VCPU:4").content.decode()
    assert "page 1 of 2" in body and "page=2" in body
    document = as_json(client, "resources=VCPU:4", per_page=100).json()
    assert document["page"] == {"number": 1, "per_page": 100, "pages": 1, "trees": 25}
    assert len(document["trees"]) == 25
    assert as_json(client, "resources=VCPU:4", per_page=101).status_code == 400


@pytest.mark.parametrize("q, version, code, detail", [
    ("resources=NOPE:1", "1.39", "placement.undefined_code",
     "Invalid resource class in resources parameter: No such resource class NOPE."),
    ("resources=VCPU:1&required=HW_CPU_X86_AVX2", "1.10", None,
     "Invalid query string parameters: Additional properties are not allowed "
     "('required' was unexpected)"),
    ("resources=VCPU:1&root_required=A&root_required=!B", "1.35",
     "placement.query.duplicate_key", "Query parameter 'root_required' may be specified only once."),
])
def test_a_refused_query_is_a_clear_400(client, db, q, version, code, detail):
    response = page(client, q, version=version)
    assert response.status_code == 200   # the page worked; it shows the API's 400
    assert "400 Bad Request" in response.content.decode()
    assert response.context["error"]["code"] == code
    assert response.context["error"]["detail"] == detail
    assert "error-box" in response.content.decode()
    response = as_json(client, q, version=version)
    assert response.status_code == 400
    assert response.json() == {"error": {"status": 400, "title": "Bad Request", "code": code,
                                         "detail": detail}}


def test_bad_form_input_is_a_400(client, sample):
    response = page(client, "resources=VCPU:1 &x")
    assert "must not contain spaces" in response.content.decode()
    assert "ran" not in response.context
    response = as_json(client, "resources=VCPU:1", version="1.9")
    assert response.status_code == 400 and "version" in response.json()["error"]["detail"]
    response = client.get(reverse("ui:why-not-json"))
    assert response.status_code == 400
    response = as_json(client, "resources=VCPU:1", tree="nowhere")
    assert response.status_code == 400
    assert response.json()["error"]["detail"] == \
        "No resource provider with uuid nowhere or a name containing nowhere."
    response = as_json(client, "resources=VCPU:1", page="zero")
    assert response.status_code == 400


def test_a_step_that_stops_everything(client, sample):
    response = page(client, "resources=VCPU:1&member_of=f0000000-0000-0000-0000-00000000000f")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Placement stops before looking at any tree" in body
    assert "No tree is looked at." in body


def test_the_candidates_page_links_here(client, sample):
    response = client.get(reverse("ui:candidates"), {"q": "resources=VCPU:99", "version": "1.39"})
    assert reverse("ui:why-not") + "?q=resources%3DVCPU%3A99&amp;version=1.39" in \
        response.content.decode()


# --- every reason, a summary, the excluded trees only, part of a name (issue 35, item 6) ---

@pytest.fixture
def hosts(db):
    """Flat hosts: one out of memory and without AVX2, one only without AVX2, one fine."""
    both = make_provider("host-both", inventory={"VCPU": 8, "MEMORY_MB": 1024})
    trait = make_provider("host-trait", inventory={"VCPU": 8, "MEMORY_MB": 8192})
    good = make_provider("host-good", inventory={"VCPU": 8, "MEMORY_MB": 8192},
                         traits=["HW_CPU_X86_AVX2"])
    return both, trait, good


QUERY = "resources=VCPU:1,MEMORY_MB:4096&required=HW_CPU_X86_AVX2"


def provider_reasons(response, name):
    for tree in response.context["explanation"]["trees"]:
        for provider in tree["providers"]:
            if provider["name"] == name:
                return [r["message"] for r in provider["reasons"]]
    raise AssertionError(name)


def test_every_failing_reason_of_a_provider_is_shown(client, hosts):
    response = page(client, QUERY)
    assert provider_reasons(response, "host-both") == [
        "MEMORY_MB: needs 4096, free 1024 (capacity 1024, used 0)",
        "missing trait HW_CPU_X86_AVX2"]
    # only the trait: the provider's row says so, not "—"
    assert provider_reasons(response, "host-trait") == ["missing trait HW_CPU_X86_AVX2"]
    assert provider_reasons(response, "host-good") == []


def test_summary_by_reason_and_excluded_only(client, hosts):
    response = page(client, QUERY)
    assert response.context["summary"] == [("missing trait HW_CPU_X86_AVX2", 2, 2),
                                           ("no provider can supply MEMORY_MB", 1, 0),
                                           ("not enough free MEMORY_MB", 1, 1)]
    body = response.content.decode()
    assert 'id="reason-summary"' in body and "host-good" in body
    only = page(client, QUERY, excluded="on")
    assert [t["root"]["name"] for t in only.context["trees"]] == ["host-both", "host-trait"]
    assert only.context["hidden_fitting"] == 1
    assert "1 that fit not shown" in only.content.decode()
    assert "excluded=on" in only.context["page_query"]


def test_part_of_a_host_name_explains_the_matching_trees(client, hosts):
    response = page(client, QUERY, tree="HOST-B")
    assert [t["root"]["name"] for t in response.context["trees"]] == ["host-both"]
    several = page(client, QUERY, tree="host")
    assert [t["root"]["name"] for t in several.context["trees"]] == [
        "host-both", "host-good", "host-trait"]
    assert several.context["explanation"]["page"]["trees"] == 3
    missing = page(client, QUERY, tree="nowhere")
    assert missing.context["error"]["detail"] == (
        "No resource provider with uuid nowhere or a name containing nowhere.")


# --- the whole cloud first (issue 43, item 3) ------------------------------------------------

@pytest.fixture
def cloud(db):
    """25 small hosts (VCPU 4, one fits VCPU:6 only once it has 8), one host with 8, one
    with 7 (the closest excluded), one with 16 but without the trait, and a rack whose 6
    switches have no VCPU (identical reasons, collapsed)."""
    for n in range(25):
        make_provider(f"small-{n:02}", inventory={"VCPU": 4}, traits=["HW_CPU_X86_AVX2"])
    make_provider("big-8", inventory={"VCPU": 8}, traits=["HW_CPU_X86_AVX2"])
    make_provider("near-7", inventory={"VCPU": 7}, traits=["HW_CPU_X86_AVX2"])
    make_provider("no-avx", inventory={"VCPU": 16})
    rack = make_provider("rack", inventory={"VCPU": 2}, traits=["HW_CPU_X86_AVX2"])
    for n in range(6):
        make_provider(f"rack-sw{n}", parent=rack)


def test_why_not_answers_for_the_whole_cloud_first(client, cloud, django_assert_max_num_queries):
    q = "resources=VCPU:8&required=HW_CPU_X86_AVX2"
    with django_assert_max_num_queries(30):
        response = page(client, q, per_page=20)
    cloud_wide = response.context["cloud"]
    assert (cloud_wide["trees"], cloud_wide["fitting_trees"]) == (29, 1)
    summary = dict((label, trees) for label, trees, _ in cloud_wide["summary"])
    assert summary["not enough free VCPU"] == 27       # counted over every tree, not a page
    assert summary["missing trait HW_CPU_X86_AVX2"] == 1
    closest = [tree["root"]["name"] for tree in cloud_wide["closest"]]
    assert closest[:2] == ["near-7", "small-00"]        # one VCPU short, then four short
    assert closest[-1] == "no-avx" or "no-avx" not in closest[:-1]
    body = response.content.decode()
    assert "The whole cloud: <strong>1 of 29</strong> trees yields candidates" in body
    assert body.index('id="cloud-wide"') < body.index('id="why-not-count"')


def test_identical_sibling_reasons_are_collapsed(client, cloud):
    response = page(client, "resources=VCPU:8&required=HW_CPU_X86_AVX2", tree="rack")
    body = response.content.decode()
    assert "rack-sw0</a> … rack-sw5 <span class=\"muted\">(6 siblings, the same)</span>" in body
    assert body.count(">rack-sw") == 1
    assert "cloud" not in response.context          # a tree asked for: its own answer only
