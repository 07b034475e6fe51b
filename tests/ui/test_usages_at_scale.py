"""The usages page at cloud scale (issue 35, item 9): 3,000 consumers in 3,000 groups are
paged, totalled over every group, sortable, with the CSV link above the table, in a
bounded number of queries."""
import csv
import io

import pytest
from django.urls import reverse

from allocations.models import Allocation, Consumer
from tests.bigcloud import build_cloud

pytestmark = pytest.mark.django_db


@pytest.fixture
def cloud(db):
    return build_cloud(providers=3000, consumers=3000)


def test_usages_page_is_paged_with_totals_of_every_group(client, cloud, django_assert_max_num_queries):
    with django_assert_max_num_queries(8):
        response = client.get(reverse("ui:usages"))
    assert response.status_code == 200
    totals = response.context["totals"]
    page = response.context["page"]
    assert len(response.context["table"]) == 50
    assert page.paginator.count == totals["groups"] > 2000
    assert totals["consumers"] == Consumer.objects.count()
    by_class = dict(zip(response.context["classes"], totals["amounts"]))
    assert by_class["VCPU"] == sum(Allocation.objects.filter(resource_class__name="VCPU")
                                   .values_list("used", flat=True))
    body = response.content.decode()
    # the export link comes before the table, the totals row after its rows
    assert body.index('id="usages-csv"') < body.index('<table id="usages"')
    assert body.index("<tfoot>") > body.index("<tbody>")
    assert f"Total, all {totals['groups']} groups" in body

    last = client.get(reverse("ui:usages"), {"page": page.paginator.num_pages})
    assert last.context["page"].number == page.paginator.num_pages
    assert last.context["totals"] == totals


def test_usages_sorted_by_a_class_and_the_csv_follows(client, cloud):
    response = client.get(reverse("ui:usages"), {"group_by": "project", "sort": "VCPU"})
    rows = response.context["table"]
    i = response.context["classes"].index("VCPU")
    amounts = [row["amounts"][i] for row in rows]
    assert amounts == sorted(amounts, reverse=True) and len(rows) == 50
    smallest = client.get(reverse("ui:usages"), {"group_by": "project", "sort": "-VCPU"})
    assert smallest.context["table"][0]["amounts"][i] == min(
        int(r["VCPU"]) for r in _csv_rows(client, {"group_by": "project"}))
    exported = _csv_rows(client, {"group_by": "project", "sort": "VCPU"})
    assert len(exported) == 100   # every project, not one page
    assert [int(r["VCPU"]) for r in exported[:50]] == amounts


def _csv_rows(client, params):
    response = client.get(reverse("ui:usages-csv"), params)
    return list(csv.DictReader(io.StringIO(response.content.decode())))
