"""The whole-cloud pages: capacity per class with the provider heatmap, the status page
(placement_status's checks), and the usages CSV export."""
import csv
import io
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from allocations import status_checks
from providers.models import ResourceProvider
from tests.factories import allocate, make_consumer, make_provider, set_inventory

pytestmark = pytest.mark.django_db


def text(response):
    return response.content.decode()


def queries(client, url, params=None):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, params or {})
    assert response.status_code == 200
    return len(captured)


def by_class(response):
    return {entry["row"].resource_class: entry["row"] for entry in response.context["classes"]}


# --- capacity ------------------------------------------------------------------------

def test_capacity_per_class_on_the_sample(client, sample):
    response = client.get(reverse("ui:capacity"))
    assert response.status_code == 200
    classes = by_class(response)
    assert list(classes) == ["DISK_GB", "MEMORY_MB", "VCPU"]
    numbers = {name: (c.providers, c.total, c.reserved, c.capacity, c.used, c.free,
                      c.over_committed, c.over_capacity_providers)
               for name, c in classes.items()}
    assert numbers == {
        "DISK_GB": (1, 1000, 0, 1000, 100, 900, 0, 0),
        # cn1: 4096 - 96 reserved, 2048 used; cn2: 8192, 512 used
        "MEMORY_MB": (2, 12288, 96, 12192, 2560, 9632, 0, 0),
        # numa0 6 of 8, numa1 0 of 8, cn2 2 of 16
        "VCPU": (3, 32, 0, 32, 8, 24, 0, 0),
    }
    body = text(response)
    assert "flag over" not in body and "flag commit" not in body
    assert 'data-rc="VCPU"' in body


def test_capacity_flags_over_commit_and_over_capacity(client, sample):
    # 4 VCPU at ratio 4.0: 10 allocated is 6 beyond the physical 4, within capacity 16
    dense = make_provider("dense", inventory={"VCPU": {"total": 4, "allocation_ratio": 4.0}})
    allocate(make_consumer(), dense, VCPU=10)
    # an inventory lowered below its usage: capacity 4 - 2 = 2, 3 allocated
    squeezed = make_provider("squeezed", inventory={"VCPU": 4})
    allocate(make_consumer(), squeezed, VCPU=3)
    set_inventory(squeezed, {"VCPU": {"total": 4, "reserved": 2}})

    response = client.get(reverse("ui:capacity"))
    vcpu = by_class(response)["VCPU"]
    assert (vcpu.providers, vcpu.total, vcpu.reserved, vcpu.capacity, vcpu.used) == (
        5, 40, 2, 32 + 16 + 2, 8 + 10 + 3)
    # free: 24 on the sample, 6 on dense, none on squeezed (over capacity)
    assert vcpu.free == 24 + 6
    assert (vcpu.over_committed, vcpu.over_committed_providers) == (6 + 1, 2)
    assert vcpu.over_capacity_providers == 1
    assert by_class(response)["MEMORY_MB"].over_capacity_providers == 0
    over = response.context["over"]
    assert [(row.provider_name, row.resource_class, row.used, row.usable) for row in over] == [
        ("squeezed", "VCPU", 3, 2)]
    body = text(response)
    assert re.search(r'<tr class="flag-over" data-rc="VCPU">', body)
    assert "1 provider</span>" in body and "7 on 2 providers</span>" in body
    # the health check agrees with the page
    assert status_checks.over_capacity_rows() == [
        (squeezed.uuid, "VCPU", 3, 4, 2, 1.0)]


def test_negative_capacity_counts_as_none(client, db):
    """The reshaper may store reserved > total; such an inventory offers nothing."""
    from django.db import transaction

    from providers.services import inventories as inventory_services

    make_provider("ok", inventory={"VCPU": 8})
    odd = make_provider("odd", inventory={"VCPU": 8})
    with transaction.atomic():
        inventory_services.write_inventories(provider=odd, capacity_rule=None, inventories={
            "VCPU": {"total": 4, "reserved": 6}})
    vcpu = by_class(client.get(reverse("ui:capacity")))["VCPU"]
    assert (vcpu.total, vcpu.reserved, vcpu.capacity, vcpu.free) == (12, 6, 8, 8)
    assert vcpu.over_capacity_providers == 0


def test_heatmap_cells_by_usage(client, sample):
    response = client.get(reverse("ui:capacity"))
    cells = {cell.name: cell for cell in response.context["cells"]}
    # the most used class of each provider decides its colour step (10% each)
    assert {name: cell.step for name, cell in cells.items()} == {
        "cn1": 5,               # MEMORY_MB 2048/4000 = 51%
        "cn1-numa0": 7,         # VCPU 6/8 = 75%
        "cn1-numa1": 0,
        "cn2": 1,               # VCPU 2/16 = 12.5% (MEMORY_MB 6%)
        "shared-disk": 1,       # 10%
    }
    body = text(response)
    # each cell's accessible name says the provider and its numbers (no hover needed)
    assert (f'<a href="/ui/providers/{sample["cn2"].uuid}/" class="h1" aria-label="cn2: '
            'MEMORY_MB 512 of 8,192 used (6.2%), VCPU 2 of 16 used (12.5%)" tabindex="-1"></a>') in body
    assert f'href="/ui/providers/{sample["numa0"].uuid}/" class="h7"' in body
    assert body.count('/" class="h') == 5

    vcpu_only = client.get(reverse("ui:capacity"), {"rc": "VCPU"})
    assert vcpu_only.context["chosen"] == "VCPU"
    assert [c.name for c in vcpu_only.context["cells"]] == ["cn1-numa0", "cn1-numa1", "cn2"]
    assert 'aria-label="cn2: VCPU 2 of 16 used (12.5%)"' in text(vcpu_only)
    # an unknown class falls back to every class
    assert client.get(reverse("ui:capacity"), {"rc": "NOPE"}).context["chosen"] is None


def test_heatmap_marks_over_capacity(client, db):
    rp = make_provider("squeezed", inventory={"VCPU": 4})
    allocate(make_consumer(), rp, VCPU=3)
    set_inventory(rp, {"VCPU": {"total": 4, "reserved": 2}})  # lowered below its usage
    response = client.get(reverse("ui:capacity"))
    cell, = response.context["cells"]
    assert (cell.step, cell.over) == ("over", True)
    body = text(response)
    assert 'class="h-over" aria-label="squeezed: VCPU 3 of 2 used (150.0%), over capacity"' in body
    # said in words beside the map, and in the table's row
    assert "1 over capacity (striped, marked !)" in body
    row, = response.context["table"]["rows"]
    assert (row["cell"].name, row["state"]) == ("squeezed", "over capacity")
    assert '<td><span class="flag over">over capacity</span></td>' in body


def test_heatmap_legend_says_each_step_in_words(client, sample):
    legend = text(client.get(reverse("ui:capacity"))).split('id="heat-legend">')[1].split("</p>")[0]
    words = re.sub(r"<[^>]+>", "", legend).split()
    assert words[:2] == ["0–10%", "10–20%"]
    assert words[-5:] == ["90–100%", "100%", "(full)", "over", "capacity"]


def test_table_of_the_heatmap_providers_sorts_and_pages(client, db):
    _cloud(60)   # VCPU used 1..60 of 64: node-0059 fullest
    response = client.get(reverse("ui:capacity"), {"rc": "VCPU"})
    table = response.context["table"]
    rows = table["rows"]
    assert len(rows) == 50 and table["page"].paginator.count == 60
    assert [r["cell"].name for r in rows[:2]] == ["node-0059", "node-0058"]
    first = rows[0]
    assert (first["row"].resource_class, first["row"].used, first["row"].usable,
            first["percent"], first["state"]) == ("VCPU", 60, 64, "93.8%", "")
    body = text(response)
    assert body.index('id="heatmap"') < body.index('href="#providers-table"') \
        < body.index('class="heatmap"') < body.index('id="providers-table"')
    assert '<a href="?rc=VCPU&amp;sort=-usage&amp;page=2#providers-table">next →</a>' in body

    second = client.get(reverse("ui:capacity"), {"rc": "VCPU", "sort": "-usage", "page": 2})
    assert [r["cell"].name for r in second.context["table"]["rows"]] == [
        f"node-{i:04d}" for i in range(9, -1, -1)]
    emptiest = client.get(reverse("ui:capacity"), {"sort": "usage"}).context["table"]["rows"]
    assert emptiest[0]["cell"].name == "node-0000"
    by_name = client.get(reverse("ui:capacity"), {"sort": "name"}).context["table"]["rows"]
    assert [r["cell"].name for r in by_name[:2]] == ["node-0000", "node-0001"]
    # a sort or page that is not one is the default, not an error
    odd = client.get(reverse("ui:capacity"), {"sort": "x';", "page": "99"})
    assert odd.status_code == 200 and odd.context["table"]["sort"] == "-usage"


def test_heatmap_escapes_names(client, db):
    make_provider('<b>"x"</b>', inventory={"VCPU": 1})
    body = text(client.get(reverse("ui:capacity")))
    assert 'aria-label="&lt;b&gt;&quot;x&quot;&lt;/b&gt;: VCPU 0 of 1 used (0.0%)"' in body
    assert "<b>" not in body


def test_capacity_page_without_inventory(client, db):
    response = client.get(reverse("ui:capacity"))
    assert "No provider has inventory yet" in text(response)


def _cloud(providers, start=0):
    """`providers` compute nodes with three classes and a consumer on each."""
    for i in range(start, start + providers):
        rp = make_provider(f"node-{i:04d}", inventory={
            "VCPU": {"total": 16, "allocation_ratio": 4.0}, "MEMORY_MB": 65536,
            "DISK_GB": {"total": 1000, "reserved": 10}})
        allocate(make_consumer(), rp, VCPU=1 + i % 60, MEMORY_MB=2048, DISK_GB=20)


@pytest.mark.parametrize("name", ["ui:capacity", "ui:status"])
def test_cloud_pages_take_constant_queries(client, db, name):
    _cloud(3)
    few = queries(client, reverse(name))
    _cloud(30, start=3)
    assert queries(client, reverse(name)) == few
    if name == "ui:capacity":
        assert queries(client, reverse(name), {"rc": "VCPU"}) == few
        assert queries(client, reverse(name), {"sort": "name", "page": 2}) == few


# --- status ------------------------------------------------------------------------------

def command_results():
    """{title: result} from `manage.py placement_status`'s output, and its exit code."""
    out = StringIO()
    try:
        call_command("placement_status", stdout=out)
        code = 0
    except SystemExit as exc:
        code = exc.code
    found = dict(re.findall(r"^Check: (.+)\n  Result: (\w+)", out.getvalue(), re.M))
    return found, code, out.getvalue()


def page_results(client):
    response = client.get(reverse("ui:status"))
    assert response.status_code == 200
    return {e["title"]: e["result"].name for e in response.context["results"]}, response


def test_status_page_all_success(client, sample):
    results, response = page_results(client)
    command, code, _ = command_results()
    assert results == command
    assert set(results.values()) == {"Success"} and code == 0
    assert response.context["worst"] == "Success"
    assert "Advice:" not in text(response)


def test_status_page_matches_the_command_with_problems(client, sample, settings):
    squeezed = make_provider("squeezed", inventory={"VCPU": 4})
    allocate(make_consumer(), squeezed, VCPU=3)
    set_inventory(squeezed, {"VCPU": {"total": 4, "reserved": 2}})  # below its usage
    # damage the services refuse to make, which the checks must find:
    allocate(sample["vm2"], sample["cn2"], DISK_GB=5, unchecked=True)  # no DISK_GB inventory
    ResourceProvider.objects.filter(pk=sample["numa1"].pk).update(level=4)
    make_consumer(unchecked=True)                                     # no allocations

    results, response = page_results(client)
    command, code, out = command_results()
    assert results == command
    assert results == {
        "Consumers have a project, a user and allocations": "Warning",
        "Allocations are backed by inventory": "Failure",
        "Provider trees are consistent": "Failure",
        "Usage within capacity": "Warning",
        "Standard resource classes and traits": "Success",
        "Database connection budget": "Success",
    }
    assert code == 2 and response.context["worst"] == "Failure"
    body = text(response)
    # each check's details, offending rows and advice, as the command prints them
    for _, result in status_checks.run_checks()[0]:
        assert escape(result.details) in body
        for example in result.examples:
            assert escape(example) in body and example in out
        if result.code:
            assert escape(result.advice) in body and result.advice in out
    assert f"provider {squeezed.uuid} VCPU: used 3 &gt; capacity 2" in body
    assert f"provider {sample['numa1'].uuid}: level 4, depth in tree 1" in body
    assert body.count("<strong>Advice:</strong>") == 4


# --- usages CSV ----------------------------------------------------------------------------

def rows_of(response):
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="usages.csv"' in response["Content-Disposition"]
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_usages_csv_is_what_the_page_shows(client, sample):
    response = client.get(reverse("ui:usages-csv"))
    assert response.status_code == 200
    assert rows_of(response) == [
        ["Project", "User", "Consumer type", "Consumers", "DISK_GB", "MEMORY_MB", "VCPU"],
        ["proj-a", "alice", "INSTANCE", "1", "100", "2048", "6"],
        ["proj-b", "bob", "unknown", "1", "", "512", "2"],
    ]
    page = client.get(reverse("ui:usages"), {"group_by": "project", "project": "proj-b"})
    link = reverse("ui:usages-csv") + "?group_by=project&amp;project=proj-b"
    assert link in text(page)
    filtered = client.get(reverse("ui:usages-csv"), {"group_by": "project", "project": "proj-b"})
    assert rows_of(filtered) == [["Project", "Consumers", "MEMORY_MB", "VCPU"],
                                 ["proj-b", "1", "512", "2"]]


def test_usages_csv_invalid_filter_and_formula_cells(client, sample):
    assert rows_of(client.get(reverse("ui:usages-csv"), {"project": "x" * 300})) == [
        ["Project", "User", "Consumer type", "Consumers"]]
    allocate(make_consumer(project="=HYPERLINK(1)", user="@me"), sample["cn2"], VCPU=1)
    rows = rows_of(client.get(reverse("ui:usages-csv"), {"group_by": "user"}))
    assert ["'=HYPERLINK(1)", "'@me", "1", "", "", "1"] in rows


def test_usages_csv_needs_login(db):
    from django.test import Client

    response = Client().get(reverse("ui:usages-csv"))
    assert response.status_code == 302


# --- login ------------------------------------------------------------------------------------

NEW_PAGES = [("get", "ui:capacity", []), ("get", "ui:status", []),
             ("get", "ui:resource-classes", []), ("post", "ui:resource-classes", []),
             ("post", "ui:resource-class-delete", ["CUSTOM_X"]),
             ("get", "ui:traits", []), ("post", "ui:traits", []),
             ("post", "ui:trait-delete", ["CUSTOM_X"]),
             ("get", "ui:bulk", []), ("post", "ui:bulk-preview", []),
             ("post", "ui:bulk-apply", []), ("get", "ui:usages-csv", [])]


@pytest.mark.parametrize("method, name, args", NEW_PAGES)
def test_pages_and_actions_need_staff_login(db, method, name, args):
    from django.contrib.auth import get_user_model
    from django.test import Client

    anonymous, plain = Client(), Client()
    plain.force_login(get_user_model().objects.create_user("plain", password="pw"))
    for who in (anonymous, plain):
        response = getattr(who, method)(reverse(name, args=args), {"name": "CUSTOM_X"})
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))


# --- issue 52 row 10: what a page cannot use is said, not ignored ---------------------------

def test_an_unknown_class_or_page_is_said(client, sample):
    response = client.get(reverse("ui:capacity"), {"rc": "NOPE"})
    assert response.status_code == 200
    assert any("No provider has NOPE inventory" in str(m) for m in response.context["messages"])
    response = client.get(reverse("ui:providers"), {"page": "abc"})
    assert response.status_code == 200
    assert any("There is no page 'abc': this is page 1 of 1." in str(m)
               for m in response.context["messages"])
    response = client.get(reverse("ui:providers"), {"page": "1"})
    assert not list(response.context["messages"])


def test_consumer_tags_are_apart(client, sample):
    body = client.get(reverse("ui:consumers")).content.decode()
    assert "</span><span class=\"tag\"" not in body
