"""The candidates page and the "why not?" explainer know the opt-in extensions
(docs/clients/extensions.md) when they are on, and only then."""
import pytest
from django.urls import reverse

from tests.ui.conftest import AGG

pytestmark = pytest.mark.django_db


@pytest.fixture
def extensions_on(settings):
    settings.PLACEMENT_EXTENSIONS = frozenset({"root_member_of", "isolate"})


def versions_offered(client):
    return [value for value, _ in
            client.get(reverse("ui:candidates")).context["form"].fields["version"].choices]


def test_off_the_page_offers_up_to_1_39(client):
    assert versions_offered(client)[0] == "1.39"
    response = client.get(reverse("ui:candidates"),
                          {"q": f"resources=VCPU:1&root_member_of={AGG}", "version": "1.40"})
    assert "ran" not in response.context   # not a version the form accepts


def test_on_the_page_offers_1_40_first(client, extensions_on):
    offered = versions_offered(client)
    assert offered[0] == "1.40" and offered[1] == "1.39"


def test_on_the_page_runs_root_member_of(client, sample, extensions_on):
    response = client.get(reverse("ui:candidates"),
                          {"q": f"resources=VCPU:1&root_member_of={AGG}", "version": "1.40"})
    assert response.context["status"] == 200
    names = {a["name"] for row in response.context["candidate_rows"]
             for a in row["allocations"]}
    assert names == {"cn1-numa0", "cn1-numa1"}   # cn2's root is not in AGG


def test_on_why_not_says_the_root_is_not_in_the_aggregate(client, sample, extensions_on):
    response = client.get(reverse("ui:why-not-json"),
                          {"q": f"resources=VCPU:1&root_member_of={AGG}", "version": "1.40"})
    trees = {t["root"]["name"]: t for t in response.json()["trees"]}
    assert trees["cn1"]["fits"] and not trees["cn2"]["fits"]
    [reason] = trees["cn2"]["reasons"]
    assert reason["kind"] == "root_member_of"
    assert reason["message"] == f"root is in no aggregate of root_member_of={AGG}"
    response = client.get(reverse("ui:why-not-json"),
                          {"q": f"resources=VCPU:1&root_member_of=!{AGG}", "version": "1.40"})
    trees = {t["root"]["name"]: t for t in response.json()["trees"]}
    [reason] = trees["cn1"]["reasons"]
    assert reason["kind"] == "root_forbidden_aggregate"
    assert reason["message"] == f"root is in forbidden aggregate {AGG}"


def test_on_why_not_names_the_isolate_parameter(client, sample, extensions_on):
    response = client.get(reverse("ui:why-not-json"), {
        "q": "resources_A=VCPU:1&resources_B=VCPU:1&isolate=_A,_B", "version": "1.40",
        "tree": "cn2"})
    [tree] = response.json()["trees"]
    assert not tree["fits"]
    assert [r["message"] for r in tree["reasons"]] == [
        "isolate: group _A and group _B would share provider cn2"]
