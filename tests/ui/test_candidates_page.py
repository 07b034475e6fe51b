"""The candidates page runs a query through the real API and tabulates the answer."""
import csv
import html
import io
import json
import uuid

import pytest
from django.urls import reverse

from tests.factories import allocate, make_consumer, make_provider

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

def flavor(client, groups=(), **fields):
    """Post the flavor form: its fields, and up to three granular groups (dicts)."""
    data = {"flavor": "1", "group-TOTAL_FORMS": "3", "group-INITIAL_FORMS": "0"}
    data.update(fields)
    for index, group in enumerate(groups):
        data.update({f"group-{index}-{key}": value for key, value in group.items()})
    return client.post(reverse("ui:candidates"), data)


def test_a_flavor_writes_the_query(client, sample):
    response = flavor(client, vcpus="2", ram="2", ram_unit="GB", disk="",
                      required="HW_CPU_X86_AVX2", forbidden="CUSTOM_X, CUSTOM_Y",
                      aggregates="a0000000-0000-0000-0000-00000000000a", limit="5")
    assert response.status_code == 302
    followed = client.get(response["Location"])
    assert followed.context["form"].cleaned_data["q"] == (
        "resources=VCPU:2,MEMORY_MB:2048&required=HW_CPU_X86_AVX2,!CUSTOM_X,!CUSTOM_Y"
        "&member_of=in:a0000000-0000-0000-0000-00000000000a&limit=5")
    in_mb = flavor(client, ram="512", ram_unit="MB")
    assert "resources%3DMEMORY_MB%3A512" in in_mb["Location"]
    empty = flavor(client, required="X")
    assert empty.status_code == 200
    assert "Give at least one of VCPU, RAM and disk, or the resources of a group." in \
        empty.content.decode()


def test_the_flavor_keeps_its_values_on_the_page_of_its_query(client, sample):
    """Issue 43, item 3: after "Write the query" the flavor form was emptied."""
    response = flavor(client, vcpus="2", ram="2", ram_unit="GB", required="HW_CPU_X86_AVX2",
                      groups=[{"suffix": "_NET", "resources": "CUSTOM_VF:2"}])
    page = client.get(response["Location"])
    kept = page.context["flavor"]
    assert kept.is_bound and kept["vcpus"].value() == "2" and kept["ram_unit"].value() == "GB"
    body = page.content.decode()
    assert 'name="vcpus" value="2"' in body
    assert 'name="group-0-resources" value="CUSTOM_VF:2"' in body
    assert "placeholder=\"CUSTOM_VF:2\"" not in body
    # another query (typed in the query box) shows a blank flavor form
    other = client.get(reverse("ui:candidates"), {"q": "resources=VCPU:1", "version": "1.39"})
    assert not other.context["flavor"].is_bound


def test_a_flavor_with_granular_groups(client, sample):
    """Groups as nova writes a flavor's extra specs: resources<S>, required<S> (with
    forbidden traits), member_of<S>, group_policy and root_required."""
    response = flavor(
        client, vcpus="1", ram="512", ram_unit="MB", group_policy="isolate",
        root_required="HW_CPU_X86_AVX2", root_forbidden="CUSTOM_Z",
        groups=[{"suffix": "numa_a", "resources": "VCPU:1"},
                {"suffix": "2", "resources": "VCPU:1, MEMORY_MB:256",
                 "required": "CUSTOM_A", "forbidden": "CUSTOM_B",
                 "aggregates": "a0000000-0000-0000-0000-00000000000a"},
                {"suffix": "", "resources": ""}])
    assert response.status_code == 302
    followed = client.get(response["Location"])
    assert followed.context["form"].cleaned_data["q"] == (
        "resources=VCPU:1,MEMORY_MB:512&resourcesnuma_a=VCPU:1"
        "&resources2=VCPU:1,MEMORY_MB:256&required2=CUSTOM_A,!CUSTOM_B"
        "&member_of2=in:a0000000-0000-0000-0000-00000000000a"
        "&group_policy=isolate&root_required=HW_CPU_X86_AVX2,!CUSTOM_Z")
    assert followed.context["version"] == followed.context["form"].fields["version"].initial


def test_a_malformed_flavor_gets_field_errors(client, db):
    response = flavor(client, vcpus="1", aggregates="not-a-uuid", groups=[
        {"suffix": "a b", "resources": "VCPU:x"},
        {"suffix": "", "resources": "VCPU:1"},
        {"suffix": "ok", "resources": "VCPU"}])
    assert response.status_code == 200
    groups = response.context["flavor"].groups
    assert groups.errors[0] == {
        "suffix": ["“a b” is not a group suffix: a suffix is 1 to 64 letters, digits, "
                   "'_' or '-'."],
        "resources": ["Requested resource VCPU expected positive integer amount. Got: x. "
                      "Write CLASS:amount, e.g. VCPU:2."]}
    assert groups.errors[1] == {"suffix": ["Give this group a suffix (the 1 of resources1)."]}
    assert "Expected resources query string" in groups.errors[2]["resources"][0]
    assert response.context["flavor"].errors["aggregates"] == [
        "Expected 'member_of' parameter to contain valid UUID(s). Got: not-a-uuid"]
    body = response.content.decode()
    assert "is not a group suffix" in body and "Got: not-a-uuid" in body
    assert "ran" not in response.context

    twice = flavor(client, vcpus="1", group_policy="none", groups=[
        {"suffix": "1", "resources": "VCPU:1"}, {"suffix": "1", "resources": "VCPU:2"}])
    assert twice.context["flavor"].groups.non_form_errors() == [
        "Two groups have the suffix “1”."]
    # what the API refuses of the whole query, in the API's words: no group_policy
    no_policy = flavor(client, vcpus="1", groups=[
        {"suffix": "1", "resources": "VCPU:1"}, {"suffix": "2", "resources": "VCPU:2"}])
    assert no_policy.context["flavor"].non_field_errors() == [
        'The "group_policy" parameter is required when specifying more than one '
        '"resources{N}" parameter.']


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
                       "Amount", "Left after", "Room left"]
    assert sorted((r[1], r[2], r[4], r[5], r[6]) for r in rows[1:]) == [
        ("cn1", "cn1-numa1", "VCPU", "3", "5"), ("cn2", "cn2", "VCPU", "3", "11")]
    page = client.get(reverse("ui:candidates"), {"q": "resources=VCPU:3", "version": "1.39"})
    assert 'id="candidates-csv"' in page.content.decode()
    refused = client.get(reverse("ui:candidates-csv"), {"q": "resources=NOPE:1",
                                                        "version": "1.39"})
    assert len(list(csv.reader(io.StringIO(refused.content.decode())))) == 1


# --- queries too long for a URL (issue 35, item 10) ---------------------------------------

def long_query(size=20_000):
    """resources=VCPU:1 and a list of forbidden aggregates: `size` bytes or a little more."""
    uuids = [str(uuid.UUID(int=index + 1)) for index in range(size // 37 + 1)]
    return "resources=VCPU:1&member_of=!in:" + ",".join(uuids)


def test_a_posted_query_that_fits_a_link_is_redirected_to_it(client, many):
    response = client.post(reverse("ui:candidates"), {"q": "resources=VCPU:1",
                                                      "version": "1.39", "page": "2"})
    assert response.status_code == 302
    assert response["Location"] == (reverse("ui:candidates")
                                    + "?q=resources%3DVCPU%3A1&version=1.39&page=2")
    page = client.get(response["Location"])
    assert page.context["long_query"] is None
    assert 'id="long-query"' not in page.content.decode()


def test_a_20kb_query_gets_an_explained_page_with_its_answer(client, many):
    query = long_query()
    response = client.post(reverse("ui:candidates"), {"q": query, "version": "1.39"})
    assert response.status_code == 200
    facts = response.context["long_query"]
    assert facts["bytes"] == len(query) > 20_000
    assert facts["api_line"] == len(f"GET /allocation_candidates?{query} HTTP/1.1")
    assert facts["api_refused"] and facts["posted"] and facts["limit"] == 8190
    body = response.content.decode()
    notice = body.split('id="long-query"')[1].split("</div>")[0]
    assert f"This query is {len(query):,} bytes long." in notice
    assert "over the front door's limit of 8,190" in notice
    assert "A client must shorten it" in notice
    # and the answer, paged by posting the query again
    assert response.context["total"] == 70 and len(response.context["candidate_rows"]) == 50
    assert '<button form="ran-query" name="page" value="2"' in body
    second = client.post(reverse("ui:candidates"), {"q": query, "version": "1.39",
                                                    "page": "2"})
    assert [row["index"] for row in second.context["candidate_rows"]] == list(range(51, 71))
    # a shared link (no front door in between here) says the same
    linked = client.get(reverse("ui:candidates"), {"q": query, "version": "1.39"})
    assert linked.context["long_query"] == facts and linked.context["total"] == 70


def test_a_long_querys_csv_and_why_not_are_posted(client, many):
    query = long_query()
    page = client.post(reverse("ui:candidates"), {"q": query, "version": "1.39"})
    body = page.content.decode()
    assert f'formaction="{reverse("ui:candidates-csv")}"' in body
    assert f'formaction="{reverse("ui:why-not")}"' in body
    rows = list(csv.reader(io.StringIO(client.post(
        reverse("ui:candidates-csv"), {"q": query, "version": "1.39"}).content.decode())))
    assert len({row[0] for row in rows[1:]}) == 70

    why = client.post(reverse("ui:why-not"), {"q": query, "version": "1.39"})
    assert why.status_code == 200
    assert why.context["long_query"]["api_refused"]
    assert why.context["explanation"]["page"]["trees"] == 40
    assert "This query is" in why.content.decode()
    document = client.post(reverse("ui:why-not-json"), {"q": query, "version": "1.39"}).json()
    assert document["query"] == query and document["page"]["trees"] == 40
    short = client.post(reverse("ui:why-not"), {"q": "resources=VCPU:1", "version": "1.39",
                                                "excluded": "on"})
    assert short.status_code == 302 and "excluded=on" in short["Location"]


def test_a_query_the_api_takes_but_too_long_for_a_link(client, many):
    query = long_query(5_000)
    response = client.post(reverse("ui:candidates"), {"q": query, "version": "1.39"})
    facts = response.context["long_query"]
    assert facts["posted"] and not facts["api_refused"]
    assert "The API takes it" in response.content.decode()


# --- the answer in another order, narrowed by name (issue 35, item 7) ---------------------

def listed(client, q, **params):
    return client.get(reverse("ui:candidates"), {"q": q, "version": "1.39", **params})


def tree_names(context):
    return [g["name"] for g in context["tree_groups"]]


@pytest.fixture
def backwards(db):
    """60 flat hosts created in the reverse of their names' order (host-59 first, so the
    API answers it first): names by value put host-2 before host-10."""
    for index in reversed(range(60)):
        make_provider(f"host-{index}", inventory={"VCPU": 4})


def test_by_host_name_sorts_the_whole_answer_before_paging(client, backwards):
    as_answered = listed(client, "resources=VCPU:1").context
    assert tree_names(as_answered)[:3] == ["host-59", "host-58", "host-57"]
    by_name = listed(client, "resources=VCPU:1", order="name").context
    # host-0 was created last: the API answers it on page 2
    assert tree_names(by_name)[:3] == ["host-0", "host-1", "host-2"]
    assert tree_names(by_name)[-1] == "host-49"
    assert [row["index"] for row in by_name["candidate_rows"]][:2] == [1, 2]
    body = by_name["page_query"]
    assert "order=name" in body
    assert "order=name" in listed(client, "resources=VCPU:1", order="name").content.decode()
    second = listed(client, "resources=VCPU:1", order="name", page=2).context
    assert tree_names(second) == [f"host-{i}" for i in range(50, 60)]
    assert [row["index"] for row in second["candidate_rows"]][0] == 51


@pytest.fixture
def rooms(db):
    """Hosts whose room for VCPU:1 + MEMORY_MB:512 differs; created m1 .. m4, then n5.

    m1: VCPU 8, 6 used: (8-6-1)/8 = 12.5% (MEMORY_MB leaves 93.75%)
    m2: MEMORY_MB 1024: (1024-512)/1024 = 50% (VCPU leaves 93.75%)
    m3: VCPU 4: 3/4 = 75% (MEMORY_MB leaves 87.5%)
    m4: VCPU 10, 2 reserved: capacity 8, 7/8 = 87.5%
    n5: memory on the root, 1024 of 4096 used: (4096-1024-512)/4096 = 62.5%; VCPU on its
        child n5-numa leaves 99%
    """
    m1 = make_provider("m1", inventory={"VCPU": 8, "MEMORY_MB": 8192})
    make_provider("m2", inventory={"VCPU": 16, "MEMORY_MB": 1024})
    make_provider("m3", inventory={"VCPU": 4, "MEMORY_MB": 4096})
    make_provider("m4", inventory={"VCPU": {"total": 10, "reserved": 2}, "MEMORY_MB": 65536})
    n5 = make_provider("n5", inventory={"MEMORY_MB": 4096})
    make_provider("n5-numa", parent=n5, inventory={"VCPU": 100})
    allocate(make_consumer(), m1, VCPU=6)
    allocate(make_consumer(), n5, MEMORY_MB=1024)


ROOM_QUERY = "resources=VCPU:1,MEMORY_MB:512"


def test_room_left_orders(client, rooms):
    as_answered = listed(client, ROOM_QUERY).context
    assert tree_names(as_answered) == ["m1", "m2", "m3", "m4", "n5"]
    assert [row["room"] for row in as_answered["candidate_rows"]] == [
        "12%", "50%", "75%", "88%", "62%"]
    most = listed(client, ROOM_QUERY, order="most_room").context
    assert tree_names(most) == ["m4", "m3", "n5", "m2", "m1"]
    assert [row["index"] for row in most["candidate_rows"]] == [1, 2, 3, 4, 5]
    least = listed(client, ROOM_QUERY, order="least_room").context
    assert tree_names(least) == ["m1", "m2", "n5", "m3", "m4"]
    assert "Room left: the smallest share of capacity" in listed(
        client, ROOM_QUERY, order="least_room").content.decode()


def test_the_csv_follows_the_order_and_the_name_filter(client, rooms):
    def exported(**params):
        response = client.get(reverse("ui:candidates-csv"),
                              {"q": ROOM_QUERY, "version": "1.39", **params})
        return [(r["Candidate"], r["Provider"], r["Resource class"], r["Room left"])
                for r in csv.DictReader(io.StringIO(response.content.decode()))]

    assert [(c, p) for c, p, rc, _ in exported(order="most_room") if rc == "VCPU"] == [
        ("1", "m4"), ("2", "m3"), ("3", "n5-numa"), ("4", "m2"), ("5", "m1")]
    assert exported(order="least_room")[:2] == [("1", "m1", "MEMORY_MB", "12%"),
                                                ("1", "m1", "VCPU", "12%")]
    assert exported(host="numa") == [("1", "n5", "MEMORY_MB", "62%"),
                                     ("1", "n5-numa", "VCPU", "62%")]
    page = listed(client, ROOM_QUERY, order="least_room", host="m").content.decode()
    assert "order=least_room&amp;host=m" in page.split('id="candidates-csv"')[1][:300]


def test_host_name_contains_narrows_the_whole_answer(client, rooms):
    response = listed(client, ROOM_QUERY, host="NUMA")   # any provider of the tree
    context = response.context
    assert tree_names(context) == ["n5"]
    assert (context["total"], context["answered"], context["trees_in_answer"]) == (1, 5, 1)
    assert "1 of 5 allocation requests in 1 tree with a provider named like “NUMA”" in (
        response.content.decode())
    nothing = listed(client, ROOM_QUERY, host="nowhere")
    assert nothing.context["candidate_rows"] == [] and nothing.context["answered"] == 5
    assert "None of the 5 candidates is in a tree with a provider named like “nowhere”" in (
        nothing.content.decode())


def test_a_bad_order_is_refused_in_words(client, rooms):
    response = listed(client, ROOM_QUERY, order="bogus")
    assert response.status_code == 200
    assert "Select a valid choice. bogus is not one of the available choices." in (
        response.content.decode())
    assert tree_names(response.context) == ["m1", "m2", "m3", "m4", "n5"]   # as answered


def test_a_page_shows_the_summaries_its_candidates_use_and_raw_json_when_small(
        client, sample, monkeypatch):
    from console.candidates import pages

    context = run(client, "resources=VCPU:1").context
    # cn1-numa0, cn1-numa1 and cn2 are used; cn1 is in the answer's summaries (its tree)
    assert sorted(s["name"] for s in context["summary_rows"]) == ["cn1-numa0", "cn1-numa1",
                                                                  "cn2"]
    assert context["unused_summaries"] == 1
    assert context["raw"] is not None   # 3 requests + 4 summaries
    assert len(context["raw"]) < pages.RAW_INLINE_UP_TO
    monkeypatch.setattr(pages, "RAW_INLINE_UP_TO", len(context["raw"]) - 1)   # bytes
    response = run(client, "resources=VCPU:1")
    assert response.context["raw"] is None
    assert "resources%3DVCPU%3A1&amp;version=1.39&amp;page=1&amp;raw=1#raw" in (
        response.content.decode())
    asked = client.get(reverse("ui:candidates"), {"q": "resources=VCPU:1", "version": "1.39",
                                                  "raw": "1"})
    assert asked.context["raw"] == context["raw"]


def test_the_raw_response_reads_as_the_api_answer_with_quotes_left_bare(client, sample):
    """The raw block is the API's own answer, escaped only where HTML needs it: an
    entity for every quote made a page of candidates a quarter larger."""
    page = run(client, "resources=VCPU:1").content.decode()
    shown = page.split('<pre class="json">')[1].split("</pre>")[0]
    assert "&quot;" not in shown and '"allocation_requests": [' in shown
    api = client.get("/allocation_candidates", {"resources": "VCPU:1"},
                     HTTP_X_AUTH_TOKEN="admin", HTTP_OPENSTACK_API_VERSION="placement 1.39")
    assert json.loads(html.unescape(shown)) == api.json()


def test_the_order_form_is_posted_and_its_choice_kept(client, rooms):
    response = client.post(reverse("ui:candidates"), {
        "q": ROOM_QUERY, "version": "1.39", "order": "most_room", "host": "m"})
    assert response.status_code == 302
    assert response["Location"] == reverse("ui:candidates") + (
        "?q=resources%3DVCPU%3A1%2CMEMORY_MB%3A512&version=1.39&order=most_room&host=m")
    context = client.get(response["Location"]).context
    assert tree_names(context) == ["m4", "m3", "n5", "m2", "m1"]   # n5-numa has an m
    assert context["named"] == "m" and context["listing"]["order"].value() == "most_room"


def test_a_long_query_posts_its_order_with_its_pages_and_csv(client, backwards):
    query = long_query()
    response = client.post(reverse("ui:candidates"), {"q": query, "version": "1.39",
                                                      "order": "name"})
    assert response.status_code == 200 and response.context["long_query"]["posted"]
    assert tree_names(response.context)[:2] == ["host-0", "host-1"]
    ran = response.content.decode().split('id="ran-query"')[1].split("</form>")[0]
    assert '<input type="hidden" name="order" value="name">' in ran
    second = client.post(reverse("ui:candidates"), {"q": query, "version": "1.39",
                                                    "order": "name", "page": "2"})
    assert tree_names(second.context)[0] == "host-50"
    rows = list(csv.DictReader(io.StringIO(client.post(reverse("ui:candidates-csv"), {
        "q": query, "version": "1.39", "order": "name"}).content.decode())))
    assert [r["Provider"] for r in rows[:3]] == ["host-0", "host-1", "host-2"]
