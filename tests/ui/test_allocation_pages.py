"""Allocation pages (dashboard, usages) read through allocations.selectors."""
import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def text(response):
    return response.content.decode()


def test_dashboard_counts_and_top_usage(client, sample):
    response = client.get(reverse("ui:dashboard"))
    assert response.status_code == 200
    counts = response.context["counts"]
    assert counts == {"providers": 5, "roots": 3, "consumers": 2, "allocations": 5}
    top = response.context["top"]
    # numa0 VCPU 6/8 = 75% is the most used inventory, then cn1 MEMORY_MB 2048/4000.
    assert [(r["provider"].name, r["rc"]) for r in top[:2]] == [
        ("cn1-numa0", "VCPU"), ("cn1", "MEMORY_MB")]
    assert top[0]["used"] == 6 and top[0]["capacity"] == 8
    assert "cn1-numa0" in text(response)


def test_dashboard_without_data(client):
    response = client.get(reverse("ui:dashboard"))
    assert response.status_code == 200
    assert "Nothing is allocated yet" in text(response)


def test_usages_grouped_by_project_user_and_type(client, sample):
    response = client.get(reverse("ui:usages"))
    assert response.status_code == 200
    assert response.context["classes"] == ["DISK_GB", "MEMORY_MB", "VCPU"]
    rows = [(r["cells"], r["consumers"], r["amounts"]) for r in response.context["table"]]
    assert rows == [
        (["proj-a", "alice", "INSTANCE"], 1, [100, 2048, 6]),
        (["proj-b", "bob", "unknown"], 1, ["", 512, 2]),
    ]


def test_usages_filters_and_grouping(client, sample):
    response = client.get(reverse("ui:usages"), {"project": "proj-b", "group_by": "project"})
    assert [(r["cells"], r["amounts"]) for r in response.context["table"]] == [
        (["proj-b"], [512, 2])]
    response = client.get(reverse("ui:usages"), {"consumer_type": "unknown", "group_by": "user"})
    assert [r["cells"] for r in response.context["table"]] == [["proj-b", "bob"]]
    response = client.get(reverse("ui:usages"), {"project": "nobody"})
    assert response.context["table"] == []
    assert "No allocations" in text(response)


def test_usages_invalid_filter_shows_errors_not_totals(client, sample):
    response = client.get(reverse("ui:usages"), {"project": "x" * 300})
    assert response.status_code == 200
    assert response.context["table"] == []
    assert "at most 255 characters" in response.content.decode()
