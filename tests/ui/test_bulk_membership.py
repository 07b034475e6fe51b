"""Bulk edit of traits and aggregates (/ui/bulk/traits-aggregates/): list, preview (nothing
written), apply with each preview row's generation (a provider changed in between is a
conflict and left alone), the batch and its revert."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from console.groups import READERS

from providers.models import ChangeRecord, ResourceProvider
from providers.services.aggregates import aggregates_replace
from providers.services.provider_traits import provider_traits_replace
from tests.factories import make_provider
from tests.ui.conftest import AGG

pytestmark = pytest.mark.django_db

AGG2 = "5f2c7a34-3c0e-4d6e-8a43-000000000002"


@pytest.fixture
def reader_client(db):
    user = get_user_model().objects.create_user("rita", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name=READERS))
    client = Client()
    client.force_login(user)
    return client


def text(response):
    return response.content.decode()


def shown(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


def traits(provider):
    return sorted(ResourceProvider.objects.get(pk=provider.pk).traits.values_list(
        "name", flat=True))


def aggregates(provider):
    return sorted(ResourceProvider.objects.get(pk=provider.pk).aggregates.values_list(
        "uuid", flat=True))


def generation(provider):
    return ResourceProvider.objects.get(pk=provider.pk).generation


def preview(client, providers=(), **data):
    return client.post(reverse("ui:bulk-membership-preview"),
                       {"provider": [p.uuid for p in providers], **data})


def apply_data(response):
    """The fields the preview page's apply form posts."""
    form = response.context["form"]
    return {**form.filter_params(), **form.change_params(),
            "target": [row.target for row in response.context["changed"]]}


def test_list_every_provider_and_filters(client, sample):
    response = client.get(reverse("ui:bulk-membership"))
    assert response.status_code == 200
    assert [r["name"] for r in response.context["rows"]] == [
        "cn1", "cn1-numa0", "cn1-numa1", "cn2", "shared-disk"]
    response = client.get(reverse("ui:bulk-membership"), {"aggregate": AGG})
    assert [r["name"] for r in response.context["rows"]] == ["cn1", "shared-disk"]
    row = response.context["rows"][0]
    assert row["traits"] == ["HW_CPU_X86_AVX2"] and row["aggregates"] == [AGG]
    response = client.get(reverse("ui:bulk-membership"), {"tree": "cn1"})
    assert [r["name"] for r in response.context["rows"]] == ["cn1", "cn1-numa0", "cn1-numa1"]


@pytest.mark.parametrize("params, error", [
    ({"aggregate": "abc"}, "is not one"),
    ({"trait": "NOPE"}, "No such trait NOPE"),
    ({"tree": "nowhere"}, "No provider is named"),
])
def test_bad_filters_are_form_errors(client, sample, params, error):
    response = client.get(reverse("ui:bulk-membership"), params)
    assert response.status_code == 200
    assert error in text(response)
    assert response.context["rows"] is None


def test_list_reads_in_a_fixed_number_of_queries(client, sample, django_assert_max_num_queries):
    for i in range(30):
        make_provider(f"extra{i:02}", traits=["HW_CPU_X86_AVX2"], aggregates=[AGG2])
    with django_assert_max_num_queries(14):
        response = client.get(reverse("ui:bulk-membership"))
    assert len(response.context["rows"]) == 35


def test_preview_writes_nothing_and_shows_before_after(client, sample):
    cn1, cn2 = sample["cn1"], sample["cn2"]
    before = generation(cn1), generation(cn2)
    response = preview(client, [cn1, cn2], add_traits="HW_CPU_X86_SSE42 HW_CPU_X86_AVX2")
    assert response.status_code == 200
    rows = {row.provider_name: row for row in response.context["rows"]}
    assert rows["cn1"].before == ["HW_CPU_X86_AVX2"]
    assert rows["cn1"].after == ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42"]
    assert rows["cn1"].added == ["HW_CPU_X86_SSE42"]
    assert rows["cn2"].before == [] and rows["cn2"].added == ["HW_CPU_X86_AVX2",
                                                               "HW_CPU_X86_SSE42"]
    assert "+HW_CPU_X86_SSE42" in text(response)
    assert (generation(cn1), generation(cn2)) == before
    assert traits(cn2) == []


def test_preview_every_matching_provider(client, sample):
    response = preview(client, scope="all", trait="HW_CPU_X86_AVX2",
                       remove_traits="HW_CPU_X86_AVX2")
    assert [row.provider_name for row in response.context["changed"]] == ["cn1"]


@pytest.mark.parametrize("data, error", [
    ({"add_traits": "CUSTOM_NOT_THERE"}, "No such trait CUSTOM_NOT_THERE"),
    ({"join_aggregates": "not-a-uuid"}, "not-a-uuid is not one"),
    ({"add_traits": "HW_CPU_X86_SSE42", "join_aggregates": AGG2}, "not both"),
    ({}, "Give traits to add or remove"),
    ({"add_traits": "HW_CPU_X86_SSE42", "remove_traits": "HW_CPU_X86_SSE42"},
     "Both added and removed"),
])
def test_bad_changes_are_form_errors(client, sample, data, error):
    response = preview(client, [sample["cn1"]], **data)
    assert response.status_code == 400
    assert error in text(response)


def test_nothing_ticked_is_a_form_error(client, sample):
    response = preview(client, [], add_traits="HW_CPU_X86_SSE42")
    assert response.status_code == 400
    assert "Tick at least one provider" in text(response)


def test_apply_traits_then_revert_the_batch(client, sample):
    cn1, cn2 = sample["cn1"], sample["cn2"]
    response = preview(client, [cn1, cn2], add_traits="HW_CPU_X86_SSE42",
                       remove_traits="HW_CPU_X86_AVX2")
    response = client.post(reverse("ui:bulk-membership-apply"), apply_data(response))
    assert response.status_code == 302
    assert traits(cn1) == ["HW_CPU_X86_SSE42"] and traits(cn2) == ["HW_CPU_X86_SSE42"]
    batch = response.url.rstrip("/").rsplit("/", 1)[1]
    entries = ChangeRecord.objects.filter(request_id=batch, action="traits")
    assert entries.count() == 2
    page = client.get(response.url)
    assert page.status_code == 200 and "Revert the whole batch" in text(page)
    response = client.post(reverse("ui:bulk-membership-batch-revert", args=[batch]))
    assert response.status_code == 302
    assert traits(cn1) == ["HW_CPU_X86_AVX2"] and traits(cn2) == []
    assert any("reverted on 2 provider(s)" in m for m in shown(client.get(response.url)))


def test_apply_aggregates_leaves_unchanged_providers_alone(client, sample):
    cn1, disk = sample["cn1"], sample["disk"]
    kept = generation(disk)
    response = preview(client, [cn1, disk], join_aggregates=AGG2, leave_aggregates=AGG)
    assert len(response.context["changed"]) == 2
    response = client.post(reverse("ui:bulk-membership-apply"), apply_data(response))
    assert aggregates(cn1) == [AGG2] and aggregates(disk) == [AGG2]
    assert generation(disk) == kept + 1
    # a second time: nothing changes, nothing is written, no generation bumped
    response = preview(client, [cn1, disk], join_aggregates=AGG2)
    assert response.context["changed"] == [] and "Nothing to change" in text(response)


def test_a_provider_changed_since_the_preview_is_a_conflict_left_alone(client, sample):
    cn1, cn2 = sample["cn1"], sample["cn2"]
    response = preview(client, [cn1, cn2], join_aggregates=AGG2)
    data = apply_data(response)
    cn2.refresh_from_db()
    aggregates_replace(provider=cn2, aggregate_uuids=[AGG], generation=cn2.generation)
    response = client.post(reverse("ui:bulk-membership-apply"), data)
    messages = shown(client.get(response.url))
    assert aggregates(cn1) == [AGG, AGG2]
    assert aggregates(cn2) == [AGG]          # the newer write stays
    assert any(m.startswith("Conflict: cn2") for m in messages)


def test_revert_leaves_a_provider_changed_since_the_batch(client, sample):
    cn1, cn2 = sample["cn1"], sample["cn2"]
    response = preview(client, [cn1, cn2], add_traits="HW_CPU_X86_SSE42")
    response = client.post(reverse("ui:bulk-membership-apply"), apply_data(response))
    batch = response.url.rstrip("/").rsplit("/", 1)[1]
    cn2.refresh_from_db()
    provider_traits_replace(provider=cn2, trait_names=["HW_NUMA_ROOT"],
                            generation=cn2.generation)
    response = client.post(reverse("ui:bulk-membership-batch-revert", args=[batch]))
    messages = shown(client.get(response.url))
    assert traits(cn1) == ["HW_CPU_X86_AVX2"]
    assert traits(cn2) == ["HW_NUMA_ROOT"]
    assert any(m.startswith("cn2 not reverted") for m in messages)


def test_apply_with_bad_targets_is_a_message_not_a_500(client, sample):
    response = client.post(reverse("ui:bulk-membership-apply"),
                           {"add_traits": "HW_CPU_X86_SSE42", "target": ["garbage"]})
    assert response.status_code == 302
    assert any(m.startswith("Nothing applied") for m in shown(client.get(response.url)))


def test_unknown_batch_is_404(client, sample):
    assert client.get(reverse("ui:bulk-membership-batch", args=["nope"])).status_code == 404


def test_a_reader_may_list_but_not_apply(client, sample, reader_client):
    assert reader_client.get(reverse("ui:bulk-membership")).status_code == 200
    response = reader_client.post(reverse("ui:bulk-membership-apply"),
                                  {"add_traits": "HW_CPU_X86_SSE42",
                                   "target": [f"{sample['cn1'].uuid}:0"]})
    assert response.status_code == 403
    assert traits(sample["cn1"]) == ["HW_CPU_X86_AVX2"]


@pytest.fixture
def traits_only_client(db):
    """A staff account that may change providers' traits, not their aggregates."""
    from django.contrib.auth.models import Permission
    user = get_user_model().objects.create_user("tom", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="change_providertrait"))
    client = Client()
    client.force_login(user)
    return client


def test_the_door_asks_the_rule_of_what_is_written(traits_only_client, sample):
    cn1 = sample["cn1"]
    target = f"{cn1.uuid}:{generation(cn1)}"
    # an add box with nothing in it but separators is no trait change: the aggregates'
    # rule, which this operator lacks
    response = traits_only_client.post(reverse("ui:bulk-membership-apply"), {
        "add_traits": " , ", "join_aggregates": AGG2, "target": [target]})
    assert response.status_code == 403
    assert aggregates(cn1) == [AGG]
    response = traits_only_client.post(reverse("ui:bulk-membership-apply"), {
        "add_traits": "HW_CPU_X86_SSE42", "target": [target]})
    assert response.status_code == 302
    assert traits(cn1) == ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42"]


def test_the_preview_posts_its_targets_in_one_field(client, sample):
    import re
    cn1, cn2 = sample["cn1"], sample["cn2"]
    response = preview(client, [cn1, cn2], add_traits="HW_CPU_X86_SSE42")
    body = text(response)
    assert body.count('name="target"') == 1
    value = re.search(r'name="target" value="([^"]*)"', body).group(1)
    assert value.split() == [row.target for row in response.context["changed"]]
    client.post(reverse("ui:bulk-membership-apply"),
                {"add_traits": "HW_CPU_X86_SSE42", "target": value})
    assert traits(cn1) == ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42"]
    assert traits(cn2) == ["HW_CPU_X86_SSE42"]
