"""The admin renders every model and writes only through the services."""
import pytest
from django.urls import reverse

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from providers.models import (
    Inventory, ResourceClass, ResourceProvider, Trait,
)
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db


def _value(bound):
    value = bound.value()
    if value is None:
        return ""
    if isinstance(value, bool):
        return "on" if value else None
    return value


def _form_fields(form, data):
    for name in form.fields:
        value = _value(form[name])
        if value is not None:
            data[form.add_prefix(name)] = value


def form_data(response, **changes):
    """The POST data a browser would send for the admin change form in `response`."""
    data = {}
    _form_fields(response.context["adminform"].form, data)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        _form_fields(formset.management_form, data)
        for form in formset.forms:
            _form_fields(form, data)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def change_url(obj):
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


def errors_of(response):
    form = response.context["adminform"].form
    errors = [str(e) for e in form.non_field_errors()]
    errors += [f"{name}: {e}" for name, errs in form.errors.items() if name != "__all__"
               for e in errs]
    for inline in response.context["inline_admin_formsets"]:
        for form_errors in inline.formset.errors:
            errors += [f"{name}: {e}" for name, errs in form_errors.items() for e in errs]
    return errors


@pytest.mark.parametrize("model", [
    ResourceProvider, ResourceClass, Trait, Consumer, Project, User, ConsumerType])
def test_changelists_and_changeforms_render(client, sample, model):
    opts = model._meta
    changelist = client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    assert changelist.status_code == 200
    obj = model.objects.order_by("pk").first()
    assert client.get(change_url(obj)).status_code == 200


def test_provider_changelist_is_tree_ordered_and_searchable(client, sample):
    response = client.get(reverse("admin:providers_resourceprovider_changelist"))
    names = [p.name for p in response.context["cl"].result_list]
    assert names.index("cn1") < names.index("cn1-numa0") < names.index("cn1-numa1")
    assert response.context["action_form"] is None  # no bulk delete bypassing the services
    response = client.get(reverse("admin:providers_resourceprovider_changelist"), {"q": "numa"})
    assert [p.name for p in response.context["cl"].result_list] == ["cn1-numa0", "cn1-numa1"]


def test_add_provider_through_the_service(client, sample):
    add_url = reverse("admin:providers_resourceprovider_add")
    page = client.get(add_url)
    assert page.status_code == 200
    data = form_data(page, name="cn3", parent=str(sample["cn2"].pk), **{
        "inventories-0-resource_class": str(ResourceClass.objects.get(name="VCPU").pk),
        "inventories-0-total": "32", "inventories-0-allocation_ratio": "4.0",
        "provideraggregate_set-0-aggregate_uuid": "11111111-2222-3333-4444-555555555555",
    })
    response = client.post(add_url, data, follow=True)
    assert response.status_code == 200, errors_of(response)
    cn3 = ResourceProvider.objects.get(name="cn3")
    assert cn3.parent == sample["cn2"] and cn3.root_id == sample["cn2"].pk  # set by the service
    assert len(cn3.uuid) == 36
    inv = Inventory.objects.get(provider=cn3)
    assert (inv.resource_class.name, inv.total, inv.allocation_ratio) == ("VCPU", 32, 4.0)
    assert list(cn3.aggregates.values_list("uuid", flat=True)) == [
        "11111111-2222-3333-4444-555555555555"]
    assert cn3.generation == 2  # one inventory write, one aggregate write


def test_duplicate_name_and_bad_uuid_are_form_errors(client, sample):
    add_url = reverse("admin:providers_resourceprovider_add")
    data = form_data(client.get(add_url), name="cn2", uuid="nope")
    response = client.post(add_url, data)
    assert response.status_code == 200
    errors = errors_of(response)
    assert any("name" in e and "already exists" in e for e in errors)
    assert any(e.startswith("uuid: Enter a uuid") for e in errors)
    assert ResourceProvider.objects.count() == 5


def test_change_provider_name_parent_and_inlines(client, sample):
    numa1, cn2 = sample["numa1"], sample["cn2"]
    url = change_url(numa1)
    page = client.get(url)
    hw_avx = Trait.objects.get(name="HW_CPU_X86_AVX2")
    data = form_data(page, name="numa1-moved", parent=str(cn2.pk), **{
        "inventories-0-total": "12",
        "providertrait_set-0-trait": str(hw_avx.pk),
    })
    response = client.post(url, data, follow=True)
    assert response.status_code == 200, errors_of(response)
    numa1.refresh_from_db()
    assert (numa1.name, numa1.parent_id, numa1.root_id) == ("numa1-moved", cn2.pk, cn2.pk)
    assert Inventory.objects.get(provider=numa1).total == 12
    assert list(numa1.traits.values_list("name", flat=True)) == ["HW_CPU_X86_AVX2"]
    assert numa1.generation == 3  # 1 (its inventory) + inventories + traits


def typed(response, name):
    """The value the admin form in `response` shows for field `name`."""
    return response.context["adminform"].form[name].value()


def inline_typed(response, prefix, index, name):
    for inline in response.context["inline_admin_formsets"]:
        if inline.formset.prefix == prefix:
            return inline.formset.forms[index][name].value()
    raise KeyError(prefix)


def test_inline_delete_of_an_inventory_in_use_is_a_form_error(client, sample):
    numa0 = sample["numa0"]
    url = change_url(numa0)
    data = form_data(client.get(url), name="renamed", **{"inventories-0-DELETE": "on"})
    response = client.post(url, data)
    assert response.status_code == 200
    assert any("in use" in e for e in errors_of(response))
    assert any("'cn1-numa0'" in e for e in errors_of(response))  # named, not by uuid
    assert not any(numa0.uuid in e for e in errors_of(response))
    assert typed(response, "name") == "renamed"  # the typed values are kept
    assert inline_typed(response, "inventories", 0, "DELETE") is True
    numa0.refresh_from_db()
    assert numa0.name == "cn1-numa0"  # the rename was rolled back with the inventory write
    assert numa0.generation == 3  # as the sample left it
    assert Inventory.objects.filter(provider=numa0).count() == 1


def inventory_row(response, resource_class):
    """The index of the inventory inline row of `resource_class`."""
    for inline in response.context["inline_admin_formsets"]:
        if inline.formset.prefix == "inventories":
            return next(i for i, form in enumerate(inline.formset.forms)
                        if form.instance.pk and form.instance.resource_class.name == resource_class)
    raise KeyError("inventories")


def test_inventory_cut_below_usage_asks_first_like_the_operator_page(client, sample):
    cn2, vm2 = sample["cn2"], sample["vm2"]   # vm2 holds MEMORY_MB=512 of 8192
    url = change_url(cn2)
    page = client.get(url)
    assert 'type="checkbox" name="confirm_below_usage"' not in page.content.decode()
    row = inventory_row(page, "MEMORY_MB")
    data = form_data(page, **{f"inventories-{row}-reserved": 8000})
    response = client.post(url, data)
    assert response.status_code == 200   # asked, not saved
    [error] = errors_of(response)
    assert error == (
        "confirm_below_usage: MEMORY_MB: the new capacity 192 is below the 512 already "
        f"allocated, by 1 consumer: {vm2.uuid} (512). cn2 would take no new MEMORY_MB "
        'allocations until usage falls. Tick "Save below usage" to save anyway.')
    assert 'type="checkbox" name="confirm_below_usage"' in response.content.decode()
    assert Inventory.objects.get(provider=cn2, resource_class__name="MEMORY_MB").reserved == 0
    assert ResourceProvider.objects.get(pk=cn2.pk).generation == cn2.generation

    response = client.post(url, {**data, "confirm_below_usage": "on"})
    assert response.status_code == 302, errors_of(response)
    assert Inventory.objects.get(provider=cn2, resource_class__name="MEMORY_MB").reserved == 8000


def test_a_provider_already_below_usage_saves_other_changes_without_asking(client, sample):
    from tests.factories import set_inventory

    cn2 = sample["cn2"]
    set_inventory(cn2, {"VCPU": 1, "MEMORY_MB": 8192})   # below vm2's VCPU=2, as the API allows
    url = change_url(cn2)
    response = client.post(url, form_data(client.get(url), name="cn2-renamed"))
    assert response.status_code == 302, errors_of(response)
    assert ResourceProvider.objects.get(pk=cn2.pk).name == "cn2-renamed"


def test_invalid_inline_inventory_is_a_form_error(client, sample):
    cn2 = sample["cn2"]
    url = change_url(cn2)
    data = form_data(client.get(url), name="cn2-renamed", **{"inventories-0-reserved": "100"})
    response = client.post(url, data)
    assert response.status_code == 200
    # the service's refusal, in Placement's words, on the form
    assert any("The reserved value is greater than total" in e for e in errors_of(response))
    assert inline_typed(response, "inventories", 0, "reserved") == "100"
    assert typed(response, "name") == "cn2-renamed"
    cn2.refresh_from_db()
    assert (cn2.name, cn2.generation) == ("cn2", 2)  # as the sample left it
    assert Inventory.objects.get(provider=cn2, resource_class__name="VCPU").reserved == 0


@pytest.mark.parametrize("field, value", [
    ("total", "0"), ("reserved", "-1"), ("min_unit", "0"), ("max_unit", "0"),
    ("step_size", "0"), ("allocation_ratio", "-1"), ("total", "2147483648"),
])
def test_inline_inventory_field_rules_come_from_the_model_or_service(client, sample, field,
                                                                     value):
    cn2 = sample["cn2"]
    url = change_url(cn2)
    data = form_data(client.get(url), **{f"inventories-0-{field}": value})
    response = client.post(url, data)
    assert response.status_code == 200
    assert errors_of(response)
    assert inline_typed(response, "inventories", 0, field) == value
    assert Inventory.objects.get(provider=cn2, resource_class__name="VCPU").total == 16
    assert ResourceProvider.objects.get(pk=cn2.pk).generation == 2  # as the sample left it


def test_stale_generation_is_a_form_error_and_writes_nothing(client, sample):
    cn2 = sample["cn2"]
    url = change_url(cn2)
    data = form_data(client.get(url), **{"inventories-0-total": "20"})
    ResourceProvider.objects.filter(pk=cn2.pk).update(generation=5)  # someone else wrote
    response = client.post(url, data)
    assert response.status_code == 200
    assert any("someone changed this resource provider meanwhile" in e
               for e in errors_of(response))
    assert inline_typed(response, "inventories", 0, "total") == "20"
    assert Inventory.objects.get(provider=cn2, resource_class__name="VCPU").total == 16
    assert ResourceProvider.objects.get(pk=cn2.pk).generation == 5


def test_each_changed_set_is_one_generation_checked_service_write(client, sample):
    cn2 = sample["cn2"]
    url = change_url(cn2)
    hw_avx = Trait.objects.get(name="HW_CPU_X86_AVX2")
    data = form_data(client.get(url), **{
        "inventories-0-total": "20", "providertrait_set-0-trait": str(hw_avx.pk)})
    response = client.post(url, data, follow=True)
    assert response.status_code == 200, errors_of(response)
    cn2.refresh_from_db()
    assert cn2.generation == 4  # from 2: inventories, then traits; each bumped it once
    # an unchanged form writes nothing, so the generation stays
    response = client.post(url, form_data(client.get(url)), follow=True)
    assert response.status_code == 200, errors_of(response)
    assert ResourceProvider.objects.get(pk=cn2.pk).generation == 4


def test_moving_a_subtree_rewrites_its_root_through_the_service(client, sample):
    cn1, cn2 = sample["cn1"], sample["cn2"]
    url = change_url(cn1)
    response = client.post(url, form_data(client.get(url), parent=str(cn2.pk)), follow=True)
    assert response.status_code == 200, errors_of(response)
    moved = {p.name: (p.parent_id, p.root_id, p.level)
             for p in ResourceProvider.objects.filter(name__startswith="cn1")}
    assert moved == {"cn1": (cn2.pk, cn2.pk, 1), "cn1-numa0": (cn1.pk, cn2.pk, 2),
                     "cn1-numa1": (cn1.pk, cn2.pk, 2)}


def test_delete_provider_through_the_service(client, sample):
    leaf = make_provider("leaf")
    response = client.post(reverse("admin:providers_resourceprovider_delete", args=[leaf.pk]),
                           {"post": "yes"}, follow=True)
    assert response.status_code == 200
    assert not ResourceProvider.objects.filter(pk=leaf.pk).exists()


@pytest.mark.parametrize("name, reason", [
    ("cn1", "It has child resource providers."),
    ("cn2", "Resource provider has allocations."),
])
def test_delete_the_service_refuses_is_explained_and_not_offered(client, sample, name, reason):
    provider = sample[name]
    url = reverse("admin:providers_resourceprovider_delete", args=[provider.pk])
    page = client.get(url)
    assert page.status_code == 200
    assert reason in page.content.decode()
    assert reason in " ".join(page.context["protected"])
    response = client.post(url, {"post": "yes"})
    assert response.status_code == 200
    assert reason in response.content.decode()
    assert ResourceProvider.objects.filter(pk=provider.pk).exists()
    assert Inventory.objects.filter(provider=provider).exists()


def test_refusal_lists_allocations_by_names(client, sample):
    cn2, vm2 = sample["cn2"], sample["vm2"]
    page = client.get(reverse("admin:providers_resourceprovider_delete", args=[cn2.pk]))
    body = page.content.decode()
    assert f"Allocation: VCPU=2 on cn2 for consumer {vm2.uuid}" in body
    assert f"Allocation: MEMORY_MB=512 on cn2 for consumer {vm2.uuid}" in body
    assert f"@{cn2.pk}" not in body


def test_consumer_page_names_its_allocations(client, sample):
    vm1 = sample["vm1"]
    body = client.get(change_url(vm1)).content.decode()
    assert f"VCPU=6 on cn1-numa0 for consumer {vm1.uuid}" in body
    assert f"DISK_GB=100 on shared-disk for consumer {vm1.uuid}" in body


def test_resource_classes_custom_editable_standard_read_only(client, db):
    add_url = reverse("admin:providers_resourceclass_add")
    response = client.post(add_url, {"name": "CUSTOM_FPGA"}, follow=True)
    assert response.status_code == 200
    rc = ResourceClass.objects.get(name="CUSTOM_FPGA")
    response = client.post(add_url, {"name": "FPGA"})
    assert any("Invalid name" in e for e in errors_of(response))
    response = client.post(change_url(rc), {"name": "CUSTOM_GPU"}, follow=True)
    rc.refresh_from_db()
    assert rc.name == "CUSTOM_GPU"
    vcpu = ResourceClass.objects.get(name="VCPU")
    page = client.get(change_url(vcpu))
    assert page.context["has_change_permission"] is False
    assert page.context["has_delete_permission"] is False
    client.post(change_url(vcpu), {"name": "CUSTOM_VCPU"})
    vcpu.refresh_from_db()
    assert vcpu.name == "VCPU"
    delete_url = reverse("admin:providers_resourceclass_delete", args=[vcpu.pk])
    assert client.post(delete_url, {"post": "yes"}).status_code == 403
    client.post(reverse("admin:providers_resourceclass_delete", args=[rc.pk]), {"post": "yes"})
    assert not ResourceClass.objects.filter(pk=rc.pk).exists()


def test_resource_class_in_use_cannot_be_deleted(client, db):
    make_provider("x", inventory={"CUSTOM_BUSY": 1})
    rc = ResourceClass.objects.get(name="CUSTOM_BUSY")
    response = client.post(reverse("admin:providers_resourceclass_delete", args=[rc.pk]),
                           {"post": "yes"}, follow=True)
    assert response.status_code == 200
    assert "protected related objects" in response.content.decode()
    assert ResourceClass.objects.filter(pk=rc.pk).exists()


def test_traits_create_and_delete_custom_only(client, sample):
    add_url = reverse("admin:providers_trait_add")
    client.post(add_url, {"name": "CUSTOM_GOLD"})
    gold = Trait.objects.get(name="CUSTOM_GOLD")
    response = client.post(add_url, {"name": "custom_bad"})
    assert any("Invalid name" in e for e in errors_of(response))
    standard = Trait.objects.get(name="HW_CPU_X86_AVX2")
    assert client.get(change_url(standard)).context["has_delete_permission"] is False
    assert client.post(reverse("admin:providers_trait_delete", args=[standard.pk]),
                       {"post": "yes"}).status_code == 403
    client.post(reverse("admin:providers_trait_delete", args=[gold.pk]), {"post": "yes"})
    assert not Trait.objects.filter(name="CUSTOM_GOLD").exists()


def test_trait_in_use_cannot_be_deleted(client, sample):
    make_provider("tagged", traits=["CUSTOM_USED"])
    used = Trait.objects.get(name="CUSTOM_USED")
    response = client.post(reverse("admin:providers_trait_delete", args=[used.pk]),
                           {"post": "yes"}, follow=True)
    assert response.status_code == 200
    assert "protected related objects" in response.content.decode()
    assert Trait.objects.filter(pk=used.pk).exists()


def test_trait_autocomplete_for_the_inline(client, sample):
    response = client.get(reverse("admin:autocomplete"), {
        "app_label": "providers", "model_name": "providertrait", "field_name": "trait",
        "term": "AVX2"})
    assert response.status_code == 200
    assert "HW_CPU_X86_AVX2" in [r["text"] for r in response.json()["results"]]


def test_consumer_shows_allocations_and_deletes_through_the_service(client, sample):
    vm1 = sample["vm1"]
    page = client.get(change_url(vm1))
    assert page.status_code == 200
    body = page.content.decode()
    assert "cn1-numa0" in body and "DISK_GB" in body
    assert page.context["has_change_permission"] is False
    response = client.post(reverse("admin:allocations_consumer_delete", args=[vm1.pk]),
                           {"post": "yes"}, follow=True)
    assert response.status_code == 200
    assert not Consumer.objects.filter(pk=vm1.pk).exists()
    assert not Allocation.objects.filter(consumer_id=vm1.pk).exists()


def test_bulk_delete_consumers_action(client, sample):
    ids = [sample["vm1"].pk, sample["vm2"].pk]
    response = client.post(reverse("admin:allocations_consumer_changelist"), {
        "action": "delete_consumers", "_selected_action": ids}, follow=True)
    assert "Deleted 2 consumer(s) and their allocations." in messages_of(response)
    assert Consumer.objects.count() == 0 and Allocation.objects.count() == 0


def test_projects_users_types_are_view_only(client, sample):
    project = Project.objects.get(external_id="proj-a")
    page = client.get(change_url(project))
    assert page.context["has_change_permission"] is False
    assert client.get(reverse("admin:allocations_project_add")).status_code == 403


def test_admin_static_files_are_served(client):
    # gunicorn serves no static files; the admin (and its CSS) must still look right.
    response = client.get("/static/ui/admin.css")
    assert response.status_code == 200
    assert b"inline-group" in b"".join(response.streaming_content)
    assert client.get("/static/admin/css/base.css").status_code == 200
    assert client.get("/static/nope.css").status_code == 404


def test_admin_links_to_the_operator_ui(client):
    response = client.get(reverse("admin:index"))
    assert 'href="/ui/"' in response.content.decode()
    assert "Placement administration" in response.content.decode()


def test_login_then_back_to_the_ui(db):
    from django.contrib.auth import get_user_model
    from django.test import Client

    get_user_model().objects.create_superuser("op", "op@example.invalid", "pw")
    web = Client()
    response = web.post(reverse("admin:login") + "?next=/ui/providers/",
                        {"username": "op", "password": "pw", "next": "/ui/providers/"})
    assert response.status_code == 302 and response["Location"] == "/ui/providers/"
    assert web.get("/ui/providers/").status_code == 200


def test_add_refused_by_the_service_creates_nothing_and_keeps_the_typed_values(client, sample):
    add_url = reverse("admin:providers_resourceprovider_add")
    data = form_data(client.get(add_url), name="cn3", **{
        "inventories-0-resource_class": str(ResourceClass.objects.get(name="VCPU").pk),
        "inventories-0-total": "4", "inventories-0-reserved": "8",
    })
    response = client.post(add_url, data)
    assert response.status_code == 200
    assert any("The reserved value is greater than total" in e for e in errors_of(response))
    assert typed(response, "name") == "cn3"
    assert inline_typed(response, "inventories", 0, "reserved") == "8"
    assert not ResourceProvider.objects.filter(name="cn3").exists()


def test_admin_index_tells_placement_users_from_logins(client):
    body = client.get(reverse("admin:index")).content.decode()
    assert ">Placement users</a>" in body and ">Users</a>" in body


def test_parent_picker_is_an_autocomplete(client, sample):
    page = client.get(change_url(sample["numa0"]))
    widget = page.context["adminform"].form.fields["parent"].widget
    assert "admin-autocomplete" in str(widget.render("parent", sample["cn1"].pk))
    assert f">{sample['cn2'].name}" not in page.content.decode().split('name="parent"')[1][:2000]
    found = client.get(reverse("admin:autocomplete"), {
        "term": "cn2", "app_label": "providers", "model_name": "resourceprovider",
        "field_name": "parent"}).json()
    assert [r["text"] for r in found["results"]] == [str(sample["cn2"])]


def test_provider_change_page_reads_the_same_queries_for_any_number_of_rows(
        client, db, django_assert_max_num_queries):
    """A host reports dozens of traits and several inventories: each inline row's
    select used to read its options itself (one query per trait and per inventory)."""
    few = make_provider("few", inventory={"VCPU": 8}, traits=["HW_CPU_X86_AVX2"])
    many = make_provider("many", inventory={"VCPU": 8, "MEMORY_MB": 1024, "DISK_GB": 10,
                                            "PCI_DEVICE": 4, "VGPU": 2, "IPV4_ADDRESS": 8},
                         traits=[f"CUSTOM_T{i}" for i in range(40)])
    with django_assert_max_num_queries(10) as counted:
        client.get(change_url(few))
    with django_assert_max_num_queries(len(counted.captured_queries)):
        page = client.get(change_url(many))
    body = page.content.decode()
    # every stored trait and class still shows selected in its row
    for i in range(40):
        assert f'<option value="{Trait.objects.get(name=f"CUSTOM_T{i}").pk}" selected>' \
               f'CUSTOM_T{i}</option>' in body
    inventories = next(i.formset for i in page.context["inline_admin_formsets"]
                       if i.formset.model is Inventory)
    assert sorted(str(f["resource_class"].value()) for f in inventories.forms[:6]) == sorted(
        str(inv.resource_class_id) for inv in many.inventories.all())
    assert body.count(f'<option value="{ResourceClass.objects.get(name="VGPU").pk}" selected>'
                      "VGPU</option>") == 1


def test_consumer_change_page_reads_the_same_queries_for_any_number_of_allocations(
        client, db, django_assert_max_num_queries):
    """Each allocation row is titled with its consumer (Allocation.__str__), which
    was read once per row."""
    small, big = make_consumer(), make_consumer()
    allocate(small, make_provider("one", inventory={"VCPU": 8}), VCPU=1)
    for i in range(20):
        allocate(big, make_provider(f"host-{i:02d}", inventory={"VCPU": 8}), VCPU=1)
    with django_assert_max_num_queries(8) as counted:
        client.get(change_url(small))
    with django_assert_max_num_queries(len(counted.captured_queries)):
        page = client.get(change_url(big))
    assert page.content.decode().count(f"VCPU=1 on host-") == 20


def test_deleting_a_class_in_use_says_who_holds_it_with_links(client, db):
    """Issue 43, item 6: the refusal was every protected row ("Inventory: 22@2045: 1")."""
    from providers.models import ResourceClass
    from tests.factories import allocate, make_consumer, make_provider

    hosts = [make_provider(f"gpu-{n}", inventory={"CUSTOM_GPU": 4}) for n in range(3)]
    for host in hosts[:2]:
        allocate(make_consumer(), host, CUSTOM_GPU=1)
    rc = ResourceClass.objects.get(name="CUSTOM_GPU")
    response = client.get(reverse("admin:providers_resourceclass_delete", args=[rc.pk]))
    body = response.content.decode()
    assert "CUSTOM_GPU is in the inventory of 3 providers: " \
           '<a href="/ui/bulk/?resource_class=CUSTOM_GPU">list them</a>' in body
    assert "2 consumers hold CUSTOM_GPU: " \
           '<a href="/ui/capacity/?rc=CUSTOM_GPU">their providers, used and capacity</a>' in body
    assert "Inventory:" not in body and "Allocation:" not in body
    client.post(reverse("admin:providers_resourceclass_delete", args=[rc.pk]), {"post": "yes"})
    assert ResourceClass.objects.filter(name="CUSTOM_GPU").exists()


# --- issue 52 rows 3 and 7: a provider named by uuid; a cycle said as such ------------

def test_add_under_a_parent_named_by_uuid_or_by_nonsense(client, sample):
    cn1 = sample["cn1"]
    add_url = reverse("admin:providers_resourceprovider_add")
    page = client.get(f"{add_url}?parent={cn1.uuid}")
    assert page.status_code == 200
    assert page.context["adminform"].form.initial["parent"] == str(cn1.pk)
    for bad in ("abc", "00000000-0000-0000-0000-000000000000"):
        page = client.get(f"{add_url}?parent={bad}")
        assert page.status_code == 200
        assert any("to add under: choose the parent below" in m for m in messages_of(page))


def test_a_bad_parent_with_another_error_is_a_form_error(client, sample):
    add_url = reverse("admin:providers_resourceprovider_add")
    page = client.get(add_url)
    answer = client.post(add_url, form_data(page, name="", parent="abc"))
    assert answer.status_code == 200
    assert any("No resource provider 'abc'" in e for e in errors_of(answer))
    answer = client.post(add_url, form_data(page, name="under-cn1",
                                            parent=sample["cn1"].uuid), follow=True)
    assert answer.status_code == 200, errors_of(answer)
    assert ResourceProvider.objects.get(name="under-cn1").parent_id == sample["cn1"].pk


def test_reparenting_under_its_own_child_says_cycle(client, sample):
    cn1, numa0 = sample["cn1"], sample["numa0"]
    page = client.get(change_url(cn1))
    answer = client.post(change_url(cn1), form_data(page, parent=str(numa0.pk)))
    assert answer.status_code == 200
    assert any("cn1-numa0 is below cn1 in its tree: as its parent it would make a cycle"
               in e for e in errors_of(answer))
    cn1.refresh_from_db()
    assert cn1.parent_id is None


@pytest.mark.parametrize("changelist, lookup", [
    ("admin:providers_resourceprovider_changelist", "parent"),
    ("admin:providers_resourceprovider_changelist", "traits"),
    ("admin:providers_resourceprovider_changelist", "aggregates"),
    ("admin:allocations_consumer_changelist", "project"),
    ("admin:allocations_consumer_changelist", "consumer_type"),
])
def test_a_lookup_past_64_bits_is_an_invalid_lookup_not_a_500(client, sample, changelist,
                                                               lookup):
    page = client.get(reverse(changelist), {lookup: "99999999999999999999"})
    # PostgreSQL and MariaDB compare it and find nothing; SQLite's driver cannot send it
    # (OverflowError): then Django's answer to an invalid lookup
    assert page.status_code in (200, 302)
    if page.status_code == 302:
        assert page["Location"].endswith("?e=1")
