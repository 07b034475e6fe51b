"""The provider list's filters (console.providers.filtersets) through the test client: each
filter and combinations keep exactly the providers GET /resource_providers lists at
1.39, a refused value is a form error with the API's message, trees sort by usage,
pages are numbered, the CSV export applies the filters, and every read is a fixed
number of queries."""
import csv
import io
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import resolve, reverse

from tests.conftest import PlacementClient
from tests.factories import allocate, make_consumer, make_provider, set_inventory
from tests.ui.conftest import AGG

pytestmark = pytest.mark.django_db

OTHER_AGG = "5f2c7a34-3c0e-4d6e-8a43-000000000002"


def nodes(response):
    return [e for e in response.context["entries"] if e["kind"] == "node"]


def matched(response):
    """Names of the providers the page marks as matching the filters."""
    return sorted(e["node"]["name"] for e in nodes(response) if e["match"])


def roots(response):
    return [e["node"]["name"] for e in nodes(response) if e["node"]["level"] == 0]


def ui_list(client, query):
    response = client.get(reverse("ui:providers") + "?" + query)
    assert response.status_code == 200
    return response


def api_names(query):
    response = PlacementClient(version="1.39").get(f"/resource_providers?{query}")
    assert response.status_code == 200, response.content
    return sorted(rp["name"] for rp in response.json()["resource_providers"])


def errors(response):
    return {name: list(errs) for name, errs in response.context["filter"].form.errors.items()}


@pytest.fixture
def full(sample):
    """The sample plus a provider whose usage exceeds its lowered inventory."""
    host = make_provider("cn3-full", inventory={"VCPU": 6}, aggregates=[OTHER_AGG])
    allocate(make_consumer(), host, VCPU=6)
    set_inventory(host, {"VCPU": 4})
    return {**sample, "full": host}


# --- each filter, and combinations, as the API filters ---------------------------

AS_THE_API = [
    "resources=VCPU:4",
    "resources=VCPU:2,MEMORY_MB:1024",
    "resources=MEMORY_MB:3000",
    "resources=DISK_GB:900",
    "required=HW_NUMA_ROOT",
    "required=!HW_NUMA_ROOT",
    "required=HW_CPU_X86_AVX2,!HW_NUMA_ROOT",
    "required=in:HW_NUMA_ROOT,MISC_SHARES_VIA_AGGREGATE",
    "required=in:HW_NUMA_ROOT,HW_CPU_X86_AVX2&required=!MISC_SHARES_VIA_AGGREGATE",
    "required=HW_NUMA_ROOT&required=HW_CPU_X86_AVX2",     # ANDed: nobody has both
    f"member_of={AGG}",
    f"member_of=!{AGG}",
    f"member_of=in:{AGG},{OTHER_AGG}",
    f"member_of={AGG}&member_of={OTHER_AGG}",             # ANDed: nobody is in both
    f"member_of={AGG}&required=MISC_SHARES_VIA_AGGREGATE",
    f"resources=VCPU:1&member_of=!{AGG}&required=!HW_NUMA_ROOT",
    "resources=VCPU:2&required=HW_NUMA_ROOT",
    "required=CUSTOM_NOBODY_HAS_IT&resources=NO_SUCH_CLASS:1",   # empty before the class is resolved
]


@pytest.mark.parametrize("query", AS_THE_API)
def test_filters_keep_what_the_api_lists(client, full, query):
    assert full["full"]  # the over-capacity provider is in the data
    from providers.models import Trait
    Trait.objects.get_or_create(name="CUSTOM_NOBODY_HAS_IT")
    response = ui_list(client, query)
    assert errors(response) == {}
    assert matched(response) == api_names(query)


def test_in_tree_keeps_the_whole_tree_of_any_of_its_providers(client, full):
    query = f"in_tree={full['numa1'].uuid}"
    response = ui_list(client, query)
    assert matched(response) == api_names(query) == ["cn1", "cn1-numa0", "cn1-numa1"]
    assert roots(response) == ["cn1"]
    # an unknown uuid lists nothing, as the API
    response = ui_list(client, "in_tree=00000000-0000-0000-0000-000000000000")
    assert response.context["entries"] == [] and errors(response) == {}
    assert "No provider matches" in response.content.decode()


def test_over_capacity(client, full):
    response = ui_list(client, "over_capacity=on")
    assert matched(response) == ["cn3-full"]
    entry = next(e for e in nodes(response) if e["match"])
    assert [(bar["rc"], bar["css"], bar["label"]) for bar in entry["inventories"]] == [
        ("VCPU", "over", "6 / 4")]
    # combined with the API's filters
    assert matched(ui_list(client, f"over_capacity=on&member_of={AGG}")) == []
    assert matched(ui_list(client, f"over_capacity=on&member_of={OTHER_AGG}")) == ["cn3-full"]


def test_name_or_uuid_combines_with_the_api_filters(client, full):
    response = ui_list(client, "q=numa&resources=VCPU:4")
    assert matched(response) == ["cn1-numa1"]


def test_matches_are_shown_in_their_trees_and_other_subtrees_fold(client, db):
    host = make_provider("host", inventory={"VCPU": 4})
    numa0 = make_provider("host-numa0", parent=host, inventory={"VCPU": 4})
    make_provider("host-numa0-pf", parent=numa0, traits=["HW_NIC_SRIOV"])
    numa1 = make_provider("host-numa1", parent=host, inventory={"VCPU": 4})
    make_provider("host-numa1-pf", parent=numa1)
    make_provider("lonely", inventory={"VCPU": 2})
    response = ui_list(client, "required=HW_NIC_SRIOV")
    assert roots(response) == ["host"]       # only the tree with a match
    entries = response.context["entries"]
    by_name = {e["node"]["name"]: e for e in entries if e["kind"] == "node"}
    assert by_name["host"]["open"] and by_name["host-numa0"]["open"]
    assert not by_name["host-numa1"]["open"]  # no match inside: folded, children not rendered
    assert "host-numa1-pf" not in by_name
    more = [e for e in entries if e["kind"] == "more"]
    assert [(e["parent"]["name"], e["start"], e["count"]) for e in more] == [("host-numa1", "0", 1)]
    # unfiltered, everything is open and rendered
    response = ui_list(client, "")
    assert all(e.get("open", True) for e in nodes(response))
    assert len(nodes(response)) == 6


# --- refused values: the API's message as a form error, never a 500 ------------------

REFUSED = [
    ("required", "HW_NUMA_ROOT,,HW_CPU_X86_AVX2"),
    ("required", "in:HW_NUMA_ROOT,!HW_CPU_X86_AVX2"),
    ("required", "CUSTOM_NO_SUCH_TRAIT"),
    ("required", "!CUSTOM_NO_SUCH_TRAIT"),
    ("resources", "VCPU"),
    ("resources", "VCPU:0"),
    ("resources", "VCPU:two"),
    ("resources", "NO_SUCH_CLASS:1"),
    ("member_of", "not-a-uuid"),
    ("member_of", f"{AGG},{OTHER_AGG}"),
    # in_tree takes a host name too (issue 43): "not-a-uuid" is a name nobody has
    # (tests/ui/test_host_page.py)
]


@pytest.mark.parametrize("key,value", REFUSED)
def test_a_refused_value_is_a_form_error_with_the_apis_message(client, full, key, value):
    response = client.get(reverse("ui:providers"), {key: value})
    assert response.status_code == 200
    [message] = errors(response)[key]
    api = PlacementClient(version="1.39").get("/resource_providers?" + urlencode({key: value}))
    assert api.status_code == 400
    assert message in api.json()["errors"][0]["detail"]
    assert response.context.get("entries") is None
    body = response.content.decode()
    assert "errorlist" in body and "Nothing is listed" in body


def test_refused_values_are_reported_together(client, full):
    response = client.get(reverse("ui:providers"),
                          {"resources": "VCPU", "member_of": "x", "sort": "bogus"})
    assert set(errors(response)) == {"resources", "member_of", "sort"}


def test_unknown_class_to_sort_by_is_refused(client, full):
    response = client.get(reverse("ui:providers"), {"sort": "-usage", "usage_of": "NOPE"})
    assert errors(response) == {"usage_of": ["No such resource class NOPE."]}


# --- order and pages -------------------------------------------------------------------

def test_sort_trees_by_usage(client, full):
    # whole-tree usage: cn1 MEMORY_MB 2048/4000, cn2 VCPU 2/16, disk 100/1000,
    # cn3-full VCPU 6/4 (over capacity)
    assert roots(ui_list(client, "")) == ["cn1", "cn2", "cn3-full", "shared-disk"]
    assert roots(ui_list(client, "sort=-usage")) == ["cn3-full", "cn1", "cn2", "shared-disk"]
    assert roots(ui_list(client, "sort=usage")) == ["shared-disk", "cn2", "cn1", "cn3-full"]
    # by one class: trees without it come last, by name
    assert roots(ui_list(client, "sort=-usage&usage_of=MEMORY_MB")) == [
        "cn1", "cn2", "cn3-full", "shared-disk"]
    assert roots(ui_list(client, "sort=-usage&usage_of=VCPU")) == [
        "cn3-full", "cn1", "cn2", "shared-disk"]
    # sorting keeps the filters
    assert roots(ui_list(client, "sort=-usage&resources=VCPU:1")) == ["cn1", "cn2"]


def test_page_numbers_carry_the_filters(client, db):
    for i in range(45):
        make_provider(f"host-{i:02d}", inventory={"VCPU": 4}, traits=["HW_CPU_X86_AVX2"])
    make_provider("other")
    response = ui_list(client, "required=HW_CPU_X86_AVX2&page=2")
    assert roots(response)[0] == "host-20"
    body = response.content.decode()
    for number in (1, 3):
        assert f'href="?required=HW_CPU_X86_AVX2&amp;page={number}">{number}</a>' in body
    assert 'aria-current="page">2</strong>' in body
    last = ui_list(client, "required=HW_CPU_X86_AVX2&page=99")   # past the end: the last page
    assert roots(last) == ["host-40", "host-41", "host-42", "host-43", "host-44"]


def test_many_pages_are_elided(client, db):
    for i in range(20 * 12):
        make_provider(f"h{i:03d}")
    body = ui_list(client, "page=6").content.decode()
    assert "…" in body
    for number in (1, 4, 5, 7, 8, 12):
        assert f'page={number}">{number}</a>' in body
    assert 'page=2">2</a>' not in body


# --- links of the page ---------------------------------------------------------------

def test_trait_and_aggregate_tags_add_a_filter(client, full):
    response = ui_list(client, "resources=VCPU:1")
    body = response.content.decode()
    assert 'href="/ui/providers/?resources=VCPU%3A1&amp;required=HW_NUMA_ROOT"' in body
    assert f'href="/ui/providers/?resources=VCPU%3A1&amp;member_of={AGG}"' in body
    # following one ANDs it with what was there
    response = ui_list(client, "resources=VCPU:1&required=HW_NUMA_ROOT")
    assert matched(response) == ["cn1-numa0"]
    # and the box shows every required= given
    response = ui_list(client, "required=HW_NUMA_ROOT&required=!HW_CPU_X86_AVX2")
    assert 'value="HW_NUMA_ROOT"' in response.content.decode()
    assert 'value="!HW_CPU_X86_AVX2"' in response.content.decode()


def test_every_trait_and_aggregate_box_is_named(client, full):
    # the <label> around a field's boxes names only the first: each box says which it is
    body = ui_list(client, "required=HW_NUMA_ROOT&required=!HW_CPU_X86_AVX2").content.decode()
    for n in (1, 2, 3):
        assert f'aria-label="Traits (required / !forbidden), box {n} of 3"' in body
    assert 'name="member_of" value="" placeholder="aggregate uuid, in:u1,u2  or  !u3" ' \
           'size="28" aria-label="Member of aggregate"' in body


def test_row_links_resolve(client, full):
    body = ui_list(client, "").content.decode()
    uuid = full["numa0"].uuid
    assert f'href="/ui/providers/{uuid}/"' in body
    assert resolve(f"/ui/providers/{uuid}/").url_name == "provider"
    assert client.get(f"/ui/providers/{uuid}/").status_code == 200


# --- subtree totals ----------------------------------------------------------------------

def test_subtree_totals(client, full):
    response = ui_list(client, "")
    cn1 = next(e for e in nodes(response) if e["node"]["name"] == "cn1")
    assert [(bar["rc"], bar["used"], bar["capacity"]) for bar in cn1["totals"]] == [
        ("MEMORY_MB", 2048, 4000), ("VCPU", 6, 16)]
    assert cn1["size"] == 3
    leaf = next(e for e in nodes(response) if e["node"]["name"] == "cn2")
    assert leaf["totals"] is None
    body = response.content.decode()
    assert "Σ VCPU" in body and "6 / 16" in body


# --- CSV export ---------------------------------------------------------------------------

def read_csv(response):
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_csv_export_has_a_header_and_a_row_per_provider(client, full):
    rows = read_csv(client.get(reverse("ui:providers-csv")))
    assert rows[0] == ["uuid", "name", "generation", "parent_provider_uuid", "root_provider_uuid",
                       "traits", "aggregates", "DISK_GB used", "DISK_GB capacity",
                       "MEMORY_MB used", "MEMORY_MB capacity", "VCPU used", "VCPU capacity"]
    assert [row[1] for row in rows[1:]] == ["cn1", "cn1-numa0", "cn1-numa1", "cn2", "cn3-full",
                                            "shared-disk"]
    numa0 = next(row for row in rows if row[1] == "cn1-numa0")
    # generation 3: its inventory, its traits, vm1's allocation
    assert numa0 == [full["numa0"].uuid, "cn1-numa0", "3", full["cn1"].uuid, full["cn1"].uuid,
                     "HW_NUMA_ROOT", "", "", "", "", "", "6", "8"]
    cn1 = next(row for row in rows if row[1] == "cn1")
    assert cn1[3] == "" and cn1[5] == "HW_CPU_X86_AVX2" and cn1[6] == AGG
    assert cn1[9:11] == ["2048", "4000"]


def test_csv_export_applies_the_filters_and_the_order(client, full):
    rows = read_csv(client.get(reverse("ui:providers-csv"), {"resources": "VCPU:2"}))
    assert [row[1] for row in rows[1:]] == api_names("resources=VCPU:2")
    assert rows[0][-2:] == ["VCPU used", "VCPU capacity"]
    rows = read_csv(client.get(reverse("ui:providers-csv") + "?sort=-usage"))
    # each provider's own usage: cn3-full 150%, numa0 75%, cn1 51%, cn2 12.5%, disk 10%
    assert [row[1] for row in rows[1:]] == ["cn3-full", "cn1-numa0", "cn1", "cn2", "shared-disk",
                                            "cn1-numa1"]


def test_csv_export_of_a_refused_filter_says_why(client, full):
    response = client.get(reverse("ui:providers-csv"), {"resources": "VCPU:0"})
    assert response.status_code == 400
    assert response.content.decode() == (
        "resources: Requested resource VCPU requires amount >= 1. Got: 0.\n")


def test_csv_export_defuses_formulas_in_names(client, db):
    make_provider("=HYPERLINK(\"http://example.invalid\")")
    rows = read_csv(client.get(reverse("ui:providers-csv")))
    assert rows[1][1] == "'=HYPERLINK(\"http://example.invalid\")"


# --- progressive loading of big trees ------------------------------------------------------

@pytest.fixture
def big_tree(db):
    """200 providers: a root, 3 sockets, 65/65/66 devices, every third one used."""
    root = make_provider("big", inventory={"MEMORY_MB": 1024})
    for s in range(3):
        socket = make_provider(f"big-s{s}", parent=root, inventory={"VCPU": 32})
        for d in range(66 if s == 2 else 65):
            device = make_provider(f"big-s{s}-d{d:02d}", parent=socket,
                                   inventory={"CUSTOM_DEV": 1})
            if d % 3 == 0:
                allocate(make_consumer(), device, CUSTOM_DEV=1)
    return root


def follow_more_links(client, entries, seen):
    """Render-order names, fetching every "more" entry's fragment as providers.js does."""
    for entry in entries:
        if entry["kind"] == "node":
            seen.append(entry["node"]["name"])
        elif entry["kind"] == "more":
            url = f"/ui/providers/{entry['parent']['uuid']}/subtree/?start={entry['start']}&fragment=1"
            response = client.get(url)
            assert response.status_code == 200
            assert response["X-Placement-Fragment"] == "tree-rows"
            assert "<html" not in response.content.decode()
            follow_more_links(client, response.context["entries"], seen)
    return seen


def test_a_big_tree_starts_closed_and_loads_in_fragments(client, big_tree):
    """Issue 52 row 10: unfiltered, a tree of more than BIG_TREE providers shows its root
    row with the tree's totals, closed; its rows load when it is opened."""
    from providers.models import ResourceProvider
    response = ui_list(client, "")
    first = nodes(response)
    assert len(first) == 1 and first[0]["open"] is False
    root = first[0]
    assert root["size"] == 200
    assert [(bar["rc"], bar["used"], bar["capacity"]) for bar in root["totals"]] == [
        ("CUSTOM_DEV", 66, 196), ("MEMORY_MB", 0, 1024), ("VCPU", 0, 96)]
    more = [e for e in response.context["entries"] if e["kind"] == "more"]
    assert [(e["parent"]["name"], e["count"]) for e in more] == [("big", 199)]
    names = follow_more_links(client, response.context["entries"], [])
    tree_order = list(ResourceProvider.objects.order_by("tree_id", "lft")
                      .values_list("name", flat=True))
    assert names == tree_order and len(names) == 200


def test_the_page_budget_leaves_later_trees_to_load(client, db):
    for t in range(6):
        root = make_provider(f"t{t}")
        for c in range(49):
            make_provider(f"t{t}-c{c:02d}", parent=root)
    response = ui_list(client, "")
    sizes = {}
    for entry in nodes(response):
        if entry["node"]["level"] == 0:
            sizes[entry["node"]["name"]] = 0
        sizes[list(sizes)[-1]] += 1
    # 200 rows a page: four whole trees, then roots only
    assert sizes == {"t0": 50, "t1": 50, "t2": 50, "t3": 50, "t4": 1, "t5": 1}
    names = follow_more_links(client, response.context["entries"], [])
    assert len(names) == 300


def test_long_names_and_many_traits_make_fewer_rows_not_a_bigger_page(client, db):
    """200 rows a page (four trees of 50) of 150-character names with eight traits
    each made a page of about 500 KiB: the page's rows also have a size budget; what
    it leaves out loads from the "more" links, every provider once."""
    from providers.models import ResourceProvider

    traits = [f"CUSTOM_A_RATHER_LONG_TRAIT_NAME_{i}" for i in range(8)]
    for t in range(5):
        root = make_provider(f"{'rack-' * 30}{t}", traits=traits)
        for c in range(40):
            make_provider(f"{'rack-' * 30}{t}-node{c:02d}", parent=root, traits=traits,
                          inventory={"VCPU": 8})
    response = ui_list(client, "")
    assert len(response.content) < 200 * 1024
    shown = len(nodes(response))
    assert 5 <= shown < 200
    names = follow_more_links(client, response.context["entries"], [])
    assert sorted(names) == sorted(ResourceProvider.objects.values_list("name", flat=True))


def test_the_subtree_page_works_without_javascript(client, big_tree):
    socket = big_tree.get_children().get(name="big-s1")
    response = client.get(reverse("ui:provider-subtree", args=[socket.uuid]), {"start": 10})
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" in body and "Providers under" in body
    assert [e["node"]["name"] for e in nodes(response)][:2] == ["big-s1-d10", "big-s1-d11"]
    assert len(nodes(response)) == 50
    [more] = [e for e in response.context["entries"] if e["kind"] == "more"]
    assert (more["start"], more["count"]) == ("60", 5)


def test_fragments_keep_the_filters(client, big_tree):
    response = ui_list(client, "resources=CUSTOM_DEV:1")
    more = [e for e in response.context["entries"] if e["kind"] == "more"]
    href = response.content.decode().split('class="more-link" href="')[1].split('"')[0]
    params = parse_qs(urlsplit(href.replace("&amp;", "&")).query)
    assert params["resources"] == ["CUSTOM_DEV:1"]
    assert more
    fragment = client.get(href.replace("&amp;", "&") + "&fragment=1")
    marked = [e for e in fragment.context["entries"] if e["kind"] == "node" and e["match"]]
    assert marked and all(not e["node"]["name"].endswith(("d00", "d03")) for e in marked)


def test_a_refused_filter_in_a_fragment_is_a_400(client, big_tree):
    response = client.get(reverse("ui:provider-subtree", args=[big_tree.uuid]),
                          {"fragment": "1", "resources": "VCPU"})
    assert response.status_code == 400


# --- a fixed number of queries -----------------------------------------------------------

def _forest(trees, children, prefix):
    for t in range(trees):
        root = make_provider(f"{prefix}-{t}", inventory={"MEMORY_MB": 1024},
                             traits=["HW_CPU_X86_AVX2"], aggregates=[AGG])
        for c in range(children):
            child = make_provider(f"{prefix}-{t}-{c}", parent=root, inventory={"VCPU": 5},
                                  traits=["HW_NUMA_ROOT"], aggregates=[OTHER_AGG])
            allocate(make_consumer(), child, VCPU=5 if c == 0 else c % 4 + 1)
            set_inventory(child, {"VCPU": 4})  # c0: over capacity


QUERIES = [
    ("ui:providers", ""),
    ("ui:providers", "page=2"),
    ("ui:providers", "sort=-usage"),
    ("ui:providers", "sort=usage&usage_of=VCPU"),
    ("ui:providers", f"resources=VCPU:1&required=HW_NUMA_ROOT&member_of={OTHER_AGG}"),
    ("ui:providers", "required=!HW_CPU_X86_AVX2&over_capacity=on&q=-0"),
    ("ui:providers-csv", ""),
    ("ui:providers-csv", "sort=-usage&resources=VCPU:1"),
]


def _count(client, url):
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    if response.context and "entries" in response.context:
        assert response.context["entries"], f"{url} lists nothing: a weak check"
    return len(ctx.captured_queries)


def test_query_counts_do_not_grow_with_the_providers(client, db):
    _forest(trees=2, children=2, prefix="small")
    urls = [reverse(name) + "?" + query for name, query in QUERIES]
    small = [_count(client, url) for url in urls]
    _forest(trees=30, children=8, prefix="more")      # 270 more providers, 2 pages of trees
    big_root = make_provider("wide", inventory={"VCPU": 8})
    for c in range(120):
        make_provider(f"wide-{c}", parent=big_root, inventory={"VCPU": 1})
    assert [_count(client, url) for url in urls] == small
    fragment = reverse("ui:provider-subtree", args=[big_root.uuid]) + "?start=3&fragment=1"
    assert _count(client, fragment) <= 12
    assert max(small) <= 16


def test_a_huge_amount_is_a_form_error_not_a_500(client, sample):
    """Issue 43 (and 40): resources=VCPU:9223372036854775808 answered 500."""
    from django.urls import reverse

    response = client.get(reverse("ui:providers"), {"resources": "VCPU:9223372036854775808"})
    assert response.status_code == 200
    assert ("No inventory holds more than 2,147,483,647 of a resource class: nothing can "
            "match VCPU.") in response.content.decode()
