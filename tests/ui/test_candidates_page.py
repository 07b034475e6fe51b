"""The candidates page runs a query through the real API and tabulates the answer."""
import csv
import io

import pytest
from django.urls import reverse

from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def run(client, q, version="1.39"):
    return client.get(reverse("ui:candidates"), {"q": q, "version": version})


def test_blank_page_has_the_form(client):
    response = client.get(reverse("ui:candidates"))
    assert response.status_code == 200
    assert "ran" not in response.context
    assert 'name="q"' in response.content.decode()


def test_candidates_and_summaries_tables(client, sample):
    response = run(client, "resources=VCPU:1,MEMORY_MB:512&required=HW_CPU_X86_AVX2")
    assert response.status_code == 200
    assert response.context["status"] == 200
    rows = response.context["candidate_rows"]
    # only cn1's tree has AVX2 at its root: VCPU from either NUMA node, memory from cn1
    assert sorted(sorted((a["name"], a["resources"][0][0]) for a in row["allocations"])
                  for row in rows) == [
        [("cn1", "MEMORY_MB"), ("cn1-numa0", "VCPU")],
        [("cn1", "MEMORY_MB"), ("cn1-numa1", "VCPU")],
    ]
    assert all(row["mappings"] for row in rows)  # 1.34+ mappings shown
    summaries = {s["name"]: s for s in response.context["summary_rows"]}
    assert {"cn1", "cn1-numa0", "cn1-numa1"} <= set(summaries)
    assert ("VCPU", 6, 8) in summaries["cn1-numa0"]["resources"]
    assert summaries["cn1-numa0"]["root_name"] == "cn1"
    assert "HW_CPU_X86_AVX2" in summaries["cn1"]["traits"]
    assert "cn1-numa1" in response.content.decode()


def test_old_microversion_list_form(client, db):
    make_provider("solo", inventory={"VCPU": 4})
    response = run(client, "?resources=VCPU:2", version="1.10")
    rows = response.context["candidate_rows"]
    assert [[(a["name"], a["resources"]) for a in r["allocations"]] for r in rows] == [
        [("solo", [("VCPU", 2, 2)])]]  # amount, left after
    assert response.context["summary_rows"][0]["has_tree"] is False


def test_pasted_url_is_accepted(client, db):
    make_provider("solo", inventory={"VCPU": 4})
    response = run(client, "http://placement/allocation_candidates?resources=VCPU:1")
    assert response.context["api_path"] == "/allocation_candidates?resources=VCPU:1"
    assert len(response.context["candidate_rows"]) == 1


def test_no_candidates(client, sample):
    response = run(client, "resources=VCPU:1000")
    assert response.context["candidate_rows"] == []
    assert "No provider (or combination of providers)" in response.content.decode()


def test_api_errors_are_shown(client, db):
    response = run(client, "resources=VCPU:one")
    assert response.status_code == 200
    error = response.context["error"]
    assert error["status"] == 400
    assert error["code"] == "placement.undefined_code"
    assert error["detail"] == "Requested resource VCPU expected positive integer amount. Got: one."
    assert "error-box" in response.content.decode()
    response = run(client, "resources=CUSTOM_MISSING:1")
    assert response.context["error"]["status"] == 400
    assert "CUSTOM_MISSING" in response.context["error"]["detail"]


def test_form_errors(client, db):
    response = run(client, "resources=VCPU:1 & limit=1")
    assert "must not contain spaces" in response.content.decode()
    response = run(client, "/resource_providers?name=x")
    assert response.context["form"].errors["q"]
    response = run(client, "resources=VCPU:1", version="1.9")
    assert "version" in response.context["form"].errors
    assert "ran" not in response.context


@pytest.mark.parametrize("version", ["1.10", "1.25", "1.39"])
def test_the_page_answers_what_the_api_answers(client, sample, version):
    import json

    from placement_site.inprocess import PlacementClient

    query = "resources=VCPU:1&limit=5" if version != "1.10" else "resources=VCPU:1"
    response = run(client, query, version=version)
    api = PlacementClient(version=version, token="admin").get("/allocation_candidates?" + query)
    assert api.status == 200
    assert json.loads(response.context["raw"]) == api.body


def test_the_page_uses_the_deployment_options(client, sample, settings):
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 1
    response = run(client, "resources=VCPU:1")
    assert len(response.context["candidate_rows"]) == 1


def test_a_refused_query_shows_placements_error_body(client, db):
    import json

    response = run(client, "resources=VCPU:1&group_policy=bogus", version="1.25")
    error = response.context["error"]
    assert (error["status"], error["title"]) == (400, "Bad Request")
    [body] = json.loads(response.context["raw"])["errors"]
    assert body["status"] == 400 and body["code"] == "placement.undefined_code"
    assert error["detail"] in " ".join(body["detail"].split())
    response = run(client, "resources=VCPU:1&group_policy=bogus", version="1.22")
    assert "code" not in json.loads(response.context["raw"])["errors"][0]  # 1.23+ only


def test_a_schema_refusal_shows_placements_message_and_the_code_sent(client, db):
    response = run(client, "resources=VCPU:1&required=HW_CPU_X86_AVX2", version="1.10")
    error = response.context["error"]
    assert error["detail"] == ("Invalid query string parameters: Additional properties are "
                               "not allowed ('required' was unexpected)")
    assert error["code"] is None
    body = response.content.decode()
    assert "codes start at microversion 1.23" in body
    assert "placement.undefined_code" not in body
    page_message = body.split("error-box")[1].split("</p>")[0]
    assert "Failed validating" not in page_message


def test_a_refusal_shows_the_code_placement_sends_for_it(client, db):
    response = run(client, "resources=VCPU:1&root_required=A&root_required=!B", version="1.35")
    assert response.context["error"]["code"] == "placement.query.duplicate_key"
    assert "placement.query.duplicate_key" in response.content.decode()
    response = run(client, "resources=VCPU:1&root_required=X,!X", version="1.39")
    assert response.context["error"]["code"] == "placement.query.bad_value"


@pytest.fixture
def many(db):
    """30 trees (a root and two NUMA nodes with VCPU each) and 10 flat hosts: 70
    candidates for resources=VCPU:1."""
    for index in range(30):
        root = make_provider(f"cn{index:02}", inventory={"MEMORY_MB": 1024})
        for numa in range(2):
            make_provider(f"cn{index:02}-numa{numa}", parent=root, inventory={"VCPU": 4})
    for index in range(10):
        make_provider(f"flat{index}", inventory={"VCPU": 4})


def test_an_answer_without_a_limit_is_paged_and_grouped_by_tree(client, many):
    response = run(client, "resources=VCPU:1")
    context = response.context
    assert context["total"] == 70 and context["trees_in_answer"] == 40
    assert len(context["candidate_rows"]) == 50 and context["paged"]
    assert [row["index"] for row in context["candidate_rows"]][:2] == [1, 2]
    groups = context["tree_groups"]
    assert [g["name"] for g in groups][:2] == ["cn00", "cn01"]
    assert all(len(g["rows"]) == 2 and g["in_answer"] == 2 for g in groups)
    # the summaries are those of this page's trees only
    assert {s["root_name"] for s in context["summary_rows"]} == {g["name"] for g in groups}
    body = response.content.decode()
    assert "page 1 of 2" in body and "page=2" in body
    assert "Why not?" in body

    second = run_page(client, "resources=VCPU:1", 2).context
    assert [row["index"] for row in second["candidate_rows"]] == list(range(51, 71))
    assert [g["name"] for g in second["tree_groups"]][-1] == "flat9"
    # past the last page: the last page
    assert run_page(client, "resources=VCPU:1", 9).context["page"].number == 2


def run_page(client, q, page, version="1.39"):
    return client.get(reverse("ui:candidates"), {"q": q, "version": version, "page": page})


def test_the_operators_limit_still_applies(client, many):
    context = run(client, "resources=VCPU:1&limit=60").context
    assert context["total"] == 60 and len(context["candidate_rows"]) == 50
    context = run(client, "resources=VCPU:1&limit=5").context
    assert context["total"] == 5 and not context["paged"]


def test_a_page_is_a_constant_number_of_queries(client, db, django_assert_max_num_queries):
    def build(prefix, count):
        for index in range(count):
            root = make_provider(f"{prefix}{index}", inventory={"MEMORY_MB": 1024})
            make_provider(f"{prefix}{index}-numa", parent=root, inventory={"VCPU": 4})

    build("a", 3)
    with django_assert_max_num_queries(20) as small:
        run(client, "resources=VCPU:1,MEMORY_MB:64")
    build("b", 80)
    with django_assert_max_num_queries(len(small.captured_queries)):
        response = run(client, "resources=VCPU:1,MEMORY_MB:64")
    assert response.context["total"] == 83 and len(response.context["candidate_rows"]) == 50


# --- a flavor-like form, and what each candidate leaves (issue 35, item 7) -------------------

def test_a_flavor_writes_the_query(client, sample):
    response = client.get(reverse("ui:candidates"), {
        "flavor": "1", "vcpus": "2", "ram": "2", "ram_unit": "GB", "disk": "",
        "required": "HW_CPU_X86_AVX2", "forbidden": "CUSTOM_X, CUSTOM_Y",
        "aggregates": "a0000000-0000-0000-0000-00000000000a", "limit": "5"})
    assert response.status_code == 302
    followed = client.get(response["Location"])
    assert followed.context["form"].cleaned_data["q"] == (
        "resources=VCPU:2,MEMORY_MB:2048&required=HW_CPU_X86_AVX2,!CUSTOM_X,!CUSTOM_Y"
        "&member_of=in:a0000000-0000-0000-0000-00000000000a&limit=5")
    in_mb = client.get(reverse("ui:candidates"), {"flavor": "1", "ram": "512",
                                                  "ram_unit": "MB"})
    assert "resources%3DMEMORY_MB%3A512" in in_mb["Location"]
    empty = client.get(reverse("ui:candidates"), {"flavor": "1", "required": "X"})
    assert empty.status_code == 200
    assert "Give at least one of VCPU, RAM and disk." in empty.content.decode()


def test_each_allocation_says_what_it_leaves(client, sample):
    response = client.get(reverse("ui:candidates"), {"q": "resources=VCPU:3",
                                                     "version": "1.39"})
    left = {(a["name"], rc): after for row in response.context["candidate_rows"]
            for a in row["allocations"] for rc, _, after in a["resources"]}
    # cn2: 16 - 2 used - 3; cn1-numa1: 8 - 3; cn1-numa0: 8 - 6 used, no room for 3
    assert left == {("cn2", "VCPU"): 11, ("cn1-numa1", "VCPU"): 5}
    assert "11 left" in response.content.decode()


def test_the_whole_answer_as_csv(client, sample):
    response = client.get(reverse("ui:candidates-csv"), {"q": "resources=VCPU:3",
                                                         "version": "1.39"})
    assert response["Content-Disposition"] == 'attachment; filename="candidates.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["Candidate", "Tree", "Provider", "Provider uuid", "Resource class",
                       "Amount", "Left after"]
    assert sorted((r[1], r[2], r[4], r[5], r[6]) for r in rows[1:]) == [
        ("cn1", "cn1-numa1", "VCPU", "3", "5"), ("cn2", "cn2", "VCPU", "3", "11")]
    page = client.get(reverse("ui:candidates"), {"q": "resources=VCPU:3", "version": "1.39"})
    assert 'id="candidates-csv"' in page.content.decode()
    refused = client.get(reverse("ui:candidates-csv"), {"q": "resources=NOPE:1",
                                                        "version": "1.39"})
    assert len(list(csv.reader(io.StringIO(refused.content.decode())))) == 1
