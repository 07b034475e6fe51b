"""Provider pages (trees, one provider) render behind the admin login, without N+1 queries;
the login rule of every /ui/ page is checked here too."""
import re

import pytest
from django.urls import reverse

from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def text(response):
    return response.content.decode()


@pytest.mark.parametrize("name", ["ui:dashboard", "ui:providers", "ui:usages", "ui:candidates"])
def test_pages_need_staff_login(db, name):
    from django.test import Client

    response = Client().get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_non_staff_user_is_sent_to_login(db):
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_user("plain", password="pw")
    client = Client()
    client.force_login(user)
    response = client.get(reverse("ui:providers"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def nodes(response):
    """The provider rows of a tree page, in page order (tree_layout "node" entries)."""
    return [e for e in response.context["entries"] if e["kind"] == "node"]


def trees(response):
    """[[node entries of one tree], ...] in page order."""
    result = []
    for entry in nodes(response):
        if entry["node"]["level"] == 0:
            result.append([])
        result[-1].append(entry)
    return result


def test_provider_tree_is_indented_in_tree_order(client, sample):
    response = client.get(reverse("ui:providers"))
    assert response.status_code == 200
    page = trees(response)
    # roots by name; each tree in MPTT order with its level
    assert [[(n["node"]["name"], n["node"]["level"]) for n in tree] for tree in page] == [
        [("cn1", 0), ("cn1-numa0", 1), ("cn1-numa1", 1)],
        [("cn2", 0)],
        [("shared-disk", 0)],
    ]
    numa0 = page[0][1]
    assert [(r["rc"], r["used"], r["capacity"]) for r in numa0["inventories"]] == [("VCPU", 6, 8)]
    assert page[0][0]["traits"] == ["HW_CPU_X86_AVX2"]
    assert page[0][0]["aggregates"] == [sample["cn1"].aggregates.get().uuid]
    body = text(response)
    assert sample["numa1"].uuid in body and "HW_NUMA_ROOT" in body


def test_provider_tree_search_by_name_and_uuid(client, sample):
    response = client.get(reverse("ui:providers"), {"q": "numa1"})
    page = trees(response)
    assert len(page) == 1
    assert [n["node"]["name"] for n in page[0] if n["match"]] == ["cn1-numa1"]
    response = client.get(reverse("ui:providers"), {"q": sample["cn2"].uuid[:13]})
    assert [tree[0]["node"]["name"] for tree in trees(response)] == ["cn2"]
    response = client.get(reverse("ui:providers"), {"q": "no-such-thing"})
    assert response.context["entries"] == []
    assert "No provider matches" in text(response)


def test_provider_tree_paginates_roots(client, db):
    for i in range(25):
        make_provider(f"host-{i:02d}")
    first = client.get(reverse("ui:providers"))
    assert len(trees(first)) == 20
    second = client.get(reverse("ui:providers"), {"page": 2})
    assert [t[0]["node"]["name"] for t in trees(second)] == [
        f"host-{i:02d}" for i in range(20, 25)]
    assert "page 2 of 2" in text(second)


def _big_forest(roots, children):
    for r in range(roots):
        root = make_provider(f"root-{r}", inventory={"MEMORY_MB": 1024},
                             traits=["HW_CPU_X86_AVX2"], aggregates=[f"00000000-0000-0000-0000-{r:012d}"])
        for c in range(children):
            make_provider(f"root-{r}-child-{c}", parent=root, inventory={"VCPU": 4},
                          traits=["HW_NUMA_ROOT"])


def test_provider_tree_has_no_n_plus_one(client, db, django_assert_max_num_queries):
    from tests.factories import allocate, make_consumer
    _big_forest(roots=2, children=1)
    with django_assert_max_num_queries(12) as small:
        client.get(reverse("ui:providers"))
    _big_forest(roots=0, children=0)
    for r in range(2, 15):
        root = make_provider(f"more-{r}", inventory={"VCPU": 8}, traits=["HW_NUMA_ROOT"])
        for c in range(4):
            child = make_provider(f"more-{r}-{c}", parent=root, inventory={"VCPU": 2},
                                  aggregates=["00000000-0000-0000-0000-00000000000a"])
            allocate(make_consumer(), child, VCPU=1)
    with django_assert_max_num_queries(len(small.captured_queries)) as big:
        response = client.get(reverse("ui:providers"))
    assert len(nodes(response)) > 50
    assert len(big.captured_queries) == len(small.captured_queries)


def test_provider_detail(client, sample):
    numa0 = sample["numa0"]
    response = client.get(reverse("ui:provider", args=[numa0.uuid]))
    assert response.status_code == 200
    ctx = response.context
    assert [(r["rc"], r["used"], r["capacity"]) for r in ctx["inventory_rows"]] == [("VCPU", 6, 8)]
    assert ctx["traits"] == ["HW_NUMA_ROOT"]
    assert [e["uuid"] for e in ctx["consumers"]] == [sample["vm1"].uuid]
    body = text(response)
    # parent and root links, consumer details
    assert reverse("ui:provider", args=[sample["cn1"].uuid]) in body
    assert "proj-a" in body and "INSTANCE" in body
    cn1 = client.get(reverse("ui:provider", args=[sample["cn1"].uuid]))
    assert [c.name for c in cn1.context["children"]] == ["cn1-numa0", "cn1-numa1"]


def test_provider_detail_edit_prefills_the_inventory_form(client, sample):
    response = client.get(reverse("ui:provider", args=[sample["cn1"].uuid]), {"edit": "MEMORY_MB"})
    form = response.context["inventory_form"]
    assert form.initial["resource_class"] == "MEMORY_MB"
    assert form.initial["total"] == 4096 and form.initial["reserved"] == 96


def test_provider_detail_unknown_uuid_is_404(client, db):
    response = client.get(reverse("ui:provider", args=["00000000-0000-0000-0000-000000000000"]))
    assert response.status_code == 404


def test_provider_detail_dashboard_usages_have_no_n_plus_one(client, db, django_assert_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import allocate, make_consumer

    host = make_provider("host", inventory={"VCPU": 64, "MEMORY_MB": 65536},
                         traits=["HW_CPU_X86_AVX2"])
    urls = [reverse("ui:provider", args=[host.uuid]), reverse("ui:dashboard"),
            reverse("ui:usages")]

    def counts():
        result = []
        for url in urls:
            with CaptureQueriesContext(connection) as ctx:
                assert client.get(url).status_code == 200
            result.append(len(ctx.captured_queries))
        return result

    allocate(make_consumer(project="p", user="u"), host, VCPU=1)
    # a host with children reads its tree's usage too (one query): give it one first
    make_provider("host-child-first", parent=host, inventory={"VCPU": 2})
    few = counts()
    for i in range(3):
        make_provider(f"host-child-{i}", parent=host, inventory={"VCPU": 2})
    for i in range(30):
        allocate(make_consumer(project=f"p{i}", user=f"u{i}", consumer_type="INSTANCE"),
                 host, VCPU=1, MEMORY_MB=128)
    assert counts() == few
    assert max(few) <= 18   # the provider page: its consumers are paged (count, ids, page)
    response = client.get(urls[0])
    assert len(response.context["consumers"]) == 31


def test_add_child_link_preselects_the_parent(client, sample):
    response = client.get(reverse("admin:providers_resourceprovider_add"),
                          {"parent": sample["cn2"].pk})
    assert response.context["adminform"].form.initial["parent"] == str(sample["cn2"].pk)


def _tree_cell(body, name):
    """The tree connector drawn before a provider's name in the providers table."""
    import re
    match = re.search(r'<span class="name">(.*?)<a class="pname" href="[^"]*" title="[^"]*">' + re.escape(name) + "</a>", body)
    return match.group(1)


def test_tree_draws_middle_children_with_tee_and_the_last_with_corner(client, sample):
    body = text(client.get(reverse("ui:providers")))
    assert "├" in _tree_cell(body, "cn1-numa0") and "└" not in _tree_cell(body, "cn1-numa0")
    assert "└" in _tree_cell(body, "cn1-numa1") and "├" not in _tree_cell(body, "cn1-numa1")


def test_breadcrumb_elides_only_what_it_leaves_out(client, sample):
    numa0 = sample["numa0"]
    socket = make_provider("cn1-numa0-socket", parent=numa0)
    core = make_provider("cn1-numa0-socket-core", parent=socket)
    crumbs = text(client.get(reverse("ui:provider", args=[socket.uuid]))).split("<h1>")[0]
    assert "…" not in crumbs and "cn1</a>" in crumbs and "cn1-numa0</a>" in crumbs
    crumbs = text(client.get(reverse("ui:provider", args=[core.uuid]))).split("<h1>")[0]
    assert " … / " in crumbs and "cn1-numa0-socket</a>" in crumbs


def test_uuids_do_not_wrap(client, sample):
    assert ".mono { white-space:nowrap; }" in text(client.get(reverse("ui:providers")))


def test_big_tree_children_sorted_by_name_and_told_apart(client, db):
    root = make_provider("net-agent-big.dc1.example.net")
    for port in ("ens1f3", "ens0f1", "ens10f0", "ens0f0", "ens2f1"):   # created unsorted
        make_provider(f"net-agent-big.dc1.example.net-{port}", parent=root)
    response = client.get(reverse("ui:providers"))
    rows = nodes(response)
    assert [row["node"]["name"].rsplit("-", 1)[-1] for row in rows[1:]] == [
        "ens0f0", "ens0f1", "ens1f3", "ens2f1", "ens10f0"]
    assert [row["short"] for row in rows[1:]] == [
        "…ens0f0", "…ens0f1", "…ens1f3", "…ens2f1", "…ens10f0"]
    body = text(response)
    assert ('title="net-agent-big.dc1.example.net-ens0f0" aria-label="net-agent-big.dc1.example.net-'
            'ens0f0"><span class="short">…ens0f0</span><span class="full">net-agent-big.dc1.example'
            '.net-ens0f0</span></a>') in body


def test_provider_page_forms_have_ids_of_their_own_and_labelled_boxes(client, sample):
    body = text(client.get(reverse("ui:provider", args=[sample["cn1"].uuid])))
    ids = re.findall(r' id="([^"]+)"', body)
    assert sorted(ids) == sorted(set(ids))      # three forms, one generation each
    for form in ("inventory", "traits", "aggregates"):
        assert (f'name="generation" value="{sample["cn1"].generation}" '
                f'id="{form}_generation"') in body
    for box, label in (("traits_traits", "Trait names"),
                       ("aggregates_aggregates", "Aggregate uuids")):
        assert f'<label for="{box}" style="display:block">{label}</label>' in body
        assert f'aria-describedby="{box}_helptext" id="{box}"' in body
        assert f'id="{box}_helptext"' in body
