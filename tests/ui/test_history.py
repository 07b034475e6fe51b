"""The history pages (/ui/history/, /ui/history.csv): usage and capacity over time worked
back from the change log, written through the services and the API so the log is real."""
import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from allocations.services import allocations_delete
from console.history import reads
from console.history.chart import MAX_POINTS, step_chart, thin
from foundation.actor import acting_as
from providers.models import ChangeRecord
from providers.services.change_log import change_log_prune
from tests.factories import allocate, make_consumer, make_provider, set_inventory

HISTORY = reverse("ui:history")
HISTORY_CSV = reverse("ui:history-csv")
AGG = "0b7e3c1d-8a2f-4c55-9e61-00000000aa01"
FILLER = "f111e400-0000-4000-8000-000000000001"


def values(series):
    return [(point.used, point.capacity) for point in series.points]


def by_class(history):
    return {series.resource_class: series for series in history.series}


@pytest.fixture
def host(db, make_api):
    """cn0 through a known sequence: VCPU 8, then 16, then 16 less 2 reserved at ratio 2
    (capacity 28); vm1 claims 10 (as ui:alice), nova claims 18 through the API (full),
    vm1 is deleted (18 of 28)."""
    cn0 = make_provider("cn0", inventory={"VCPU": 8}, aggregates=[AGG])
    set_inventory(cn0, {"VCPU": 16})
    set_inventory(cn0, {"VCPU": {"total": 16, "reserved": 2, "allocation_ratio": 2.0}})
    vm1 = make_consumer(project="proj-a")
    with acting_as("ui:alice"):
        allocate(vm1, cn0, VCPU=10)
    nova = make_api(token="nova:service")
    cn0.refresh_from_db()
    answer = nova.put(f"/allocations/{FILLER}", {
        "allocations": {cn0.uuid: {"resources": {"VCPU": 18}}},
        "project_id": "proj-b", "user_id": "bob", "consumer_generation": None},
        headers={"X-Roles": "admin"}, version="1.28")
    assert answer.status_code == 204, answer.content
    allocations_delete(consumer_uuid=vm1.uuid)
    return cn0


def test_provider_series_is_worked_back_exactly(host):
    found = reads.history(reads.scope_of(provider=host.uuid), window="24h")
    vcpu = by_class(found)["VCPU"]
    # the window's start (before the log: nothing), then one point per change of VCPU
    assert values(vcpu) == [(0, 0), (0, 8), (0, 16), (0, 28), (10, 28), (28, 28), (18, 28)]
    assert [point.used for point in vcpu.filled] == [28]
    full = ChangeRecord.objects.get(id=vcpu.filled[0].entry_id)
    assert (full.action, full.actor, full.project_id) == ("allocations", "nova", "service")
    assert found.filled_entries == {full.id: ["VCPU"]}


def test_latest_point_is_today_even_when_the_log_was_pruned(host):
    # drop the oldest entries: the provider's create, its first inventory and aggregate,
    # its second inventory
    oldest = list(ChangeRecord.objects.filter(entity=host.uuid).order_by("id")[:4])
    assert [entry.action for entry in oldest] == ["create", "inventories", "aggregates",
                                                 "inventories"]
    ChangeRecord.objects.filter(id__in=[entry.id for entry in oldest]).delete()
    found = reads.history(reads.scope_of(provider=host.uuid), window="24h")
    vcpu = by_class(found)["VCPU"]
    assert values(vcpu) == [(0, 16), (0, 28), (10, 28), (28, 28), (18, 28)]
    kept = ChangeRecord.objects.order_by("created_at").first().created_at
    assert found.start == found.oldest_kept == kept > found.window_start


def test_entries_older_than_the_window_are_not_read(host):
    ChangeRecord.objects.filter(entity=host.uuid, action="inventories").update(
        created_at=timezone.now() - timedelta(days=2))
    found = reads.history(reads.scope_of(provider=host.uuid), window="24h")
    assert values(by_class(found)["VCPU"]) == [(0, 28), (10, 28), (28, 28), (18, 28)]
    assert all(entry.action != "inventories" for entry in found.entries)


def test_tree_aggregate_and_class_scopes_sum_their_providers(host):
    numa = make_provider("cn0-numa0", parent=host, inventory={"VCPU": 4})
    other = make_provider("cn9", inventory={"VCPU": 2, "MEMORY_MB": 1024}, aggregates=[AGG])
    allocate(make_consumer(), numa, VCPU=3)
    tree = by_class(reads.history(reads.scope_of(tree=numa.uuid), window="24h"))
    assert values(tree["VCPU"])[-3:] == [(18, 28), (18, 32), (21, 32)]
    aggregate = by_class(reads.history(reads.scope_of(aggregate=AGG), window="24h"))
    assert values(aggregate["VCPU"])[-2:] == [(18, 28), (18, 30)]
    assert values(aggregate["MEMORY_MB"]) == [(0, 0), (0, 1024)]
    cloud = reads.history(reads.scope_of(resource_class="VCPU"), window="24h")
    assert [series.resource_class for series in cloud.series] == ["VCPU"]
    assert values(cloud.series[0])[0] == (0, 0)
    assert values(cloud.series[0])[-1] == (21, 34)
    # a class scope's timeline holds only the entries that touch the class
    assert {entry.entity for entry in cloud.entries} == {host.uuid, numa.uuid, other.uuid}
    assert all(reads.mentions(entry, "VCPU") for entry in cloud.entries)


def test_page_draws_a_chart_per_class_and_marks_the_fill_up(client, host):
    response = client.get(HISTORY, {"provider": host.uuid, "window": "24h"})
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('<svg class="history"') == 1
    assert 'data-rc="VCPU"' in page and '<path class="used" d="M' in page
    full = ChangeRecord.objects.get(actor="nova", entity=host.uuid)
    assert f'entry={full.id}#change-{full.id}"><circle class="full"' in page
    assert f'<tr id="change-{full.id}" class="flag-over">' in page
    assert "VCPU full</span> at" in page
    assert f"consumer {FILLER[:8]}… claimed VCPU=18 on cn0" in page


def test_timeline_says_what_changed_in_words(client, host):
    page = client.get(HISTORY, {"provider": host.uuid, "window": "24h"}).content.decode()
    for words in ("VCPU added: total 8 (capacity 8)",
                  "VCPU total 8 → 16 (capacity 8 → 16)",
                  "VCPU reserved 0 → 2, allocation_ratio 1.0 → 2.0 (capacity 16 → 28)",
                  "claimed VCPU=10 on cn0", "released VCPU=10 on cn0",
                  f"joined aggregate {AGG}", "provider cn0 created", "ui:alice"):
        assert words in page, words


def test_a_marker_opens_the_timeline_page_holding_its_entry(client, host):
    host.refresh_from_db()
    for number in range(30):  # push the fill-up past the first page
        set_inventory(host, {"VCPU": {"total": 16 + number, "reserved": 2,
                                      "allocation_ratio": 2.0}})
    full = ChangeRecord.objects.get(actor="nova", entity=host.uuid)
    first = client.get(HISTORY, {"provider": host.uuid}).content.decode()
    assert f'id="change-{full.id}"' not in first
    page = client.get(HISTORY, {"provider": host.uuid, "entry": full.id}).content.decode()
    assert f'id="change-{full.id}"' in page and "page 2 of 2" in page


def test_csv_holds_the_timeline_rows(client, host):
    response = client.get(HISTORY_CSV, {"provider": host.uuid, "window": "24h"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == 'attachment; filename="history.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["time", "provider_uuid", "provider_name", "actor", "project_id",
                       "request_id", "action", "change", "reached_capacity"]
    assert len(rows) == 1 + ChangeRecord.objects.filter(entity=host.uuid).count()
    filled = [row for row in rows[1:] if row[8]]
    assert len(filled) == 1
    assert filled[0][3:5] == ["nova", "service"] and filled[0][8] == "VCPU"
    assert filled[0][7] == f"consumer {FILLER} claimed VCPU=18 on cn0"
    assert filled[0][5].startswith("req-")
    # a cell holding a comma is quoted, not split
    reserved = next(row for row in rows[1:] if "reserved 0 → 2" in row[7])
    assert reserved[7] == "VCPU reserved 0 → 2, allocation_ratio 1.0 → 2.0 (capacity 16 → 28)"


def test_csv_cells_a_spreadsheet_would_run_are_quoted(client, db):
    provider = make_provider("=cmd|calc", inventory={"VCPU": 1})
    rows = list(csv.reader(io.StringIO(
        client.get(HISTORY_CSV, {"provider": provider.uuid}).content.decode())))
    assert {row[2] for row in rows[1:]} == {"'=cmd|calc"}


@pytest.mark.parametrize("query, status, words", [
    ({"provider": "c0ffee00-0000-4000-8000-000000000000"}, 404, "No resource provider"),
    ({"provider": "nope"}, 404, "No resource provider with uuid nope"),
    ({"tree": "nope"}, 404, "No resource provider"),
    ({"aggregate": "c0ffee00-0000-4000-8000-000000000000"}, 404, "No aggregate"),
    ({"resource_class": "CUSTOM_NOPE"}, 404, "No resource class CUSTOM_NOPE"),
    ({"resource_class": "VCPU", "window": "1y"}, 400, "Select a valid choice"),
    ({"provider": "a", "aggregate": "b"}, 400, "Name one of provider, tree and aggregate"),
    ({"resource_class": "VCPU", "entry": "abc"}, 400, "Enter a whole number"),
])
def test_bad_input_is_a_clear_refusal(client, db, query, status, words):
    response = client.get(HISTORY, query)
    assert response.status_code == status
    assert words in response.content.decode()
    refused = client.get(HISTORY_CSV, query)
    assert refused.status_code == status and words in refused.content.decode()


def test_query_count_does_not_grow_with_the_cloud(client, host, django_assert_max_num_queries):
    def pages():
        for query in ({"provider": host.uuid}, {"tree": host.uuid}, {"aggregate": AGG},
                      {"resource_class": "VCPU"}):
            assert client.get(HISTORY, query).status_code == 200
            assert client.get(HISTORY_CSV, query).status_code == 200

    with django_assert_max_num_queries(4 * 2 * 8) as small:
        pages()
    for number in range(20):
        cn = make_provider(f"cn-more-{number}", inventory={"VCPU": 4}, aggregates=[AGG])
        allocate(make_consumer(), cn, VCPU=1)
    with django_assert_max_num_queries(len(small.captured_queries)):
        pages()


def test_history_is_declared_as_a_usage_read():
    from console.door import PROVIDER_USAGES
    from console.history import pages
    for view in (pages.history, pages.history_csv):
        assert view.console_need.read == PROVIDER_USAGES
        assert view.console_need.write is None


def test_pages_link_to_history(client, host):
    provider = client.get(reverse("ui:provider", args=[host.uuid])).content.decode()
    assert f"{HISTORY}?provider={host.uuid}" in provider
    assert f"{HISTORY}?tree={host.uuid}" in provider
    assert f"{HISTORY}?provider={host.uuid}&amp;resource_class=VCPU" in provider
    assert f"{HISTORY}?aggregate={AGG}" in provider
    assert f"{HISTORY}?resource_class=VCPU" in client.get(reverse("ui:capacity")).content.decode()
    assert f"{HISTORY}?resource_class=VCPU" in client.get(
        reverse("ui:resource-classes")).content.decode()


def test_a_long_series_is_thinned_keeping_the_peak():
    start = timezone.now() - timedelta(days=1)
    points = [reads.Point(start + timedelta(seconds=10 * i), i % 7, 10, i) for i in range(3000)]
    points[1234] = reads.Point(points[1234].at, 99, 10, 1234)
    kept, thinned = thin(points)
    assert thinned and len(kept) <= 2 * 200 + 1 < MAX_POINTS * 2
    assert any(point.used == 99 for point in kept)
    chart = step_chart(reads.Series("VCPU", points), start=start, end=timezone.now())
    assert chart.thinned and chart.amount_ticks[-1][1] == "100"


def test_pruning_is_said_on_the_page(client, host):
    change_log_prune(days=1, now=timezone.now() + timedelta(days=2))
    assert not ChangeRecord.objects.exists()
    page = client.get(HISTORY, {"provider": host.uuid}).content.decode()
    assert "No change recorded in the window." in page
    assert "Now 18 used of 28" in page


def test_an_allocation_write_that_did_not_record_what_it_replaced_is_flagged():
    # MySQL cannot return deleted rows: a replacing write's provider entry has no
    # "consumers" before (allocations.services._delete_allocations)
    entry = reads.Entry(1, "rp", "allocations", {"generation": 3},
                        {"generation": 4, "consumers": {"c": {"VCPU": 2}}}, "a", "", "", None)
    assert reads.differences(entry) == ({"VCPU": (2, 0)}, True)
    known = reads.Entry(2, "rp", "allocations", {"consumers": {"c": {"VCPU": 1}}},
                        {"consumers": {"c": {"VCPU": 2, "MEMORY_MB": 8}}}, "a", "", "", None)
    assert reads.differences(known) == ({"VCPU": (1, 0), "MEMORY_MB": (8, 0)}, False)
