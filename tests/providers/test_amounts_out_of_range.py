"""Amounts past what any inventory holds (issue 40): one answer on every database.

An amount is bounded only below by the contract (>= 1), and no inventory holds more
than 2147483647 of a class (max_unit), so a larger amount fits nowhere: Placement's
rules give the empty answer for a query and 409 for a claim, as upstream and
PostgreSQL do. SQLite, which stores no integer past 2**63 - 1, answered 500 before.
"""
import uuid

import pytest
from django.urls import reverse

from tests.factories import make_provider

HUGE = ["2147483648", "9223372036854775808", "99999999999999999999999"]


@pytest.mark.parametrize("amount", HUGE)
def test_queries_answer_empty(api, amount):
    make_provider("host", inventory={"VCPU": 8})
    response = api.get(f"/resource_providers?resources=VCPU:{amount}")
    assert response.status_code == 200 and response.json()["resource_providers"] == []
    response = api.get(f"/allocation_candidates?resources=VCPU:{amount}")
    assert response.status_code == 200
    assert response.json()["allocation_requests"] == []


@pytest.mark.parametrize("amount", HUGE)
def test_claims_answer_conflict(api, amount):
    rp = make_provider("host", inventory={"VCPU": 8})
    response = api.put(f"/allocations/{uuid.uuid4()}", {
        "allocations": {str(rp.uuid): {"resources": {"VCPU": int(amount)}}},
        "project_id": str(uuid.uuid4()), "user_id": str(uuid.uuid4()),
        "consumer_generation": None, "consumer_type": "INSTANCE"})
    assert response.status_code == 409, response.content
    assert "violate inventory constraints" in response.json()["errors"][0]["detail"]


def test_the_provider_filter_says_why(admin_client, db):
    make_provider("host", inventory={"VCPU": 8})
    response = admin_client.get(reverse("ui:providers") + "?resources=VCPU:" + HUGE[1])
    assert response.status_code == 200
    errors = response.context["filter"].form.errors
    assert "No inventory holds more than 2,147,483,647" in errors["resources"][0]
