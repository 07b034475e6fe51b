"""The console's one search box (issue 52, "what operators reach for next" 3)."""
from django.urls import reverse

from tests.ui.conftest import AGG


def search(client, q):
    return client.get(reverse("ui:search"), {"q": q})


def test_one_match_opens_it(client, sample):
    cn2, vm2 = sample["cn2"], sample["vm2"]
    assert search(client, cn2.uuid)["Location"] == reverse("ui:provider", args=[cn2.uuid])
    assert search(client, "shared-d")["Location"] == reverse(
        "ui:provider", args=[sample["disk"].uuid])
    assert search(client, vm2.uuid)["Location"] == reverse("ui:consumer", args=[vm2.uuid])
    assert search(client, vm2.uuid[:8])["Location"] == reverse("ui:consumer", args=[vm2.uuid])
    assert search(client, AGG)["Location"] == f"{reverse('ui:providers')}?member_of={AGG}"
    assert search(client, "NUMA_ROOT")["Location"] == (
        f"{reverse('ui:providers')}?required=HW_NUMA_ROOT")
    assert search(client, "DISK_G")["Location"] == f"{reverse('ui:capacity')}?rc=DISK_GB"


def test_several_matches_are_listed_and_nothing_is_said(client, sample):
    response = search(client, "cn1")
    assert response.status_code == 200
    assert [label for _, label, _ in response.context["found"]] == [
        "cn1", "cn1-numa0", "cn1-numa1"]
    nothing = search(client, "no-such-thing")
    assert nothing.status_code == 200 and "Nothing is named" in nothing.content.decode()


def test_every_page_has_the_box(client, sample):
    body = client.get(reverse("ui:dashboard")).content.decode()
    assert f'action="{reverse("ui:search")}"' in body


def test_the_header_box_searches(client, sample):
    cn2 = sample["cn2"]
    response = client.get(reverse("ui:search"), {"find": cn2.name})
    assert response["Location"] == reverse("ui:provider", args=[cn2.uuid])
