"""The change log: every provider, class and trait write records one entry, with the
actor and request id of its entry point (API, UI, admin, command), and retention prunes.

Allocation and reshaper writes: tests/allocations/test_change_log.py.
"""
import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from allocations import services as allocation_services
from allocations.models import Consumer
from foundation import config
from foundation.actor import SYSTEM, acting_as
from providers.models import ChangeRecord, ResourceProvider, Trait
from providers.services import change_log
from providers.services import inventories as inventory_services
from providers.services import providers as provider_services
from providers.services import resource_classes as resource_class_services
from providers.services import traits as trait_services
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

UUID = "5b8d3c2a-1f0e-4a6b-9c7d-8e9f0a1b2c3d"
NOVA = {"token": "nova:service"}
NOVA_HEADERS = {"X-Roles": "admin"}


def entries(entity, kind="provider"):
    """The entity's entries, oldest first."""
    return list(ChangeRecord.objects.filter(kind=kind, entity=entity).order_by("created_at", "id"))


def log_from_here():
    """Forget the set-up's entries: the factories write through the services, which log."""
    ChangeRecord.objects.all().delete()


def only(entity, kind="provider"):
    found = entries(entity, kind)
    assert len(found) == 1, [(e.action, e.before, e.after) for e in found]
    return found[0]


@pytest.fixture
def nova(make_api):
    """An API client for user nova in project service (an administrator)."""
    client = make_api(token="nova:service")
    original = client.request

    def request(method, path, body=None, **kw):
        kw.setdefault("headers", {}).update(NOVA_HEADERS)
        return original(method, path, body, **kw)

    client.request = request
    return client


# --------------------------------------------------------------------------
# Services: one entry each, before -> after from what the service read
# --------------------------------------------------------------------------

def test_service_write_outside_any_entry_point_is_recorded_as_system():
    provider_services.provider_create(name="cn1", uuid=UUID)
    entry = only(UUID)
    assert (entry.action, entry.actor, entry.project_id, entry.request_id) == (
        "create", SYSTEM, "", "")
    assert entry.before is None
    assert entry.after == {"name": "cn1", "parent": None, "generation": 0}


def test_actor_and_request_id_come_from_the_entry_point():
    with acting_as("command:test", request_id="req-1"):
        provider_services.provider_create(name="cn1", uuid=UUID)
        # an inner entry point (a command's in-process API call) does not take over
        with acting_as("someone-else", request_id="req-2"):
            provider_services.provider_update(uuid=UUID, name="cn1-renamed")
    create, update = entries(UUID)
    assert (create.actor, create.request_id) == ("command:test", "req-1")
    assert (update.actor, update.request_id) == ("command:test", "req-1")
    assert (update.before, update.after) == ({"name": "cn1", "parent": None},
                                             {"name": "cn1-renamed", "parent": None})


def test_reparent_records_parent_uuids():
    root = make_provider("root")
    child = make_provider("child")
    log_from_here()
    provider_services.provider_update(uuid=child.uuid, name="child", parent_uuid=root.uuid)
    entry = only(child.uuid)
    assert entry.before == {"name": "child", "parent": None}
    assert entry.after == {"name": "child", "parent": root.uuid}


def test_unchanged_update_records_nothing():
    provider = make_provider("cn1")
    log_from_here()
    provider_services.provider_update(uuid=provider.uuid, name="cn1")
    assert entries(provider.uuid) == []


def test_inventory_replace_records_the_whole_inventory_before_and_after():
    provider = make_provider("cn1", inventory={"VCPU": 8, "MEMORY_MB": 1024})
    log_from_here()
    inventory_services.inventories_replace(
        provider=provider, generation=1,
        inventories={"VCPU": {"total": 16, "allocation_ratio": 2.0}, "DISK_GB": {"total": 100}})
    entry = only(provider.uuid)
    assert entry.action == "inventories"
    assert entry.before["generation"] == 1 and entry.after["generation"] == 2
    assert set(entry.before["inventories"]) == {"VCPU", "MEMORY_MB"}
    assert entry.before["inventories"]["VCPU"]["total"] == 8
    assert set(entry.after["inventories"]) == {"VCPU", "DISK_GB"}
    assert entry.after["inventories"]["VCPU"] == {
        "total": 16, "reserved": 0, "min_unit": 1, "max_unit": 2147483647, "step_size": 1,
        "allocation_ratio": 2.0}


def test_refused_write_records_nothing():
    provider = make_provider("cn1", inventory={"VCPU": 8})
    log_from_here()
    with pytest.raises(Exception):
        inventory_services.inventories_replace(provider=provider, generation=7,
                                               inventories={"VCPU": {"total": 1}})
    with pytest.raises(Exception):
        provider_services.provider_create(name="cn1")
    assert ChangeRecord.objects.filter(kind="provider").count() == 0


def test_class_and_trait_writes():
    resource_class_services.resource_class_create(name="CUSTOM_GOLD")
    resource_class_services.resource_class_rename(name="CUSTOM_GOLD", new_name="CUSTOM_SILVER")
    resource_class_services.resource_class_delete(name="CUSTOM_SILVER")
    trait_services.trait_ensure(name="CUSTOM_FAST")
    trait_services.trait_ensure(name="CUSTOM_FAST")  # exists: nothing written, nothing recorded
    trait_services.trait_delete(name="CUSTOM_FAST")
    assert [(e.action, e.before, e.after) for e in entries("CUSTOM_GOLD", "resource_class")] == [
        ("create", None, {"name": "CUSTOM_GOLD"}),
        ("rename", {"name": "CUSTOM_GOLD"}, {"name": "CUSTOM_SILVER"})]
    assert [(e.action, e.before) for e in entries("CUSTOM_SILVER", "resource_class")] == [
        ("delete", {"name": "CUSTOM_SILVER"})]
    assert [e.action for e in entries("CUSTOM_FAST", "trait")] == ["create", "delete"]


def test_batch_merges_one_entry_per_entity():
    provider = make_provider("cn1", inventory={"VCPU": 8})
    log_from_here()
    with change_log.change_batch("reshape"):
        inventory_services.write_inventories(provider=provider, remove_missing=False,
                                             inventories={"DISK_GB": {"total": 10}})
        inventory_services.write_inventories(provider=provider,
                                             inventories={"DISK_GB": {"total": 10}})
    entry = only(provider.uuid)
    assert entry.action == "reshape"
    assert entry.before["generation"] == 1
    assert set(entry.before["inventories"]) == {"VCPU"}
    assert entry.after["generation"] == 3
    assert set(entry.after["inventories"]) == {"DISK_GB"}


# --------------------------------------------------------------------------
# API: who is the token's user and project, the request id is the response's
# --------------------------------------------------------------------------

def test_api_writes_record_user_project_and_request_id(nova):
    response = nova.post("/resource_providers", {"name": "cn1", "uuid": UUID})
    assert response.status_code == 200
    rid = response["x-openstack-request-id"]
    entry = only(UUID)
    assert (entry.action, entry.actor, entry.project_id, entry.request_id) == (
        "create", "nova", "service", rid)

    response = nova.put(f"/resource_providers/{UUID}/inventories", {
        "resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}})
    assert response.status_code == 200
    response = nova.put(f"/resource_providers/{UUID}/traits", {
        "resource_provider_generation": 1, "traits": ["HW_CPU_X86_AVX2"]})
    assert response.status_code == 200
    response = nova.put(f"/resource_providers/{UUID}/aggregates", {
        "resource_provider_generation": 2,
        "aggregates": ["8b1f5c1e-8d2c-4d8a-9a55-3a4b5c6d7e8f"]})
    assert response.status_code == 200
    response = nova.put(f"/resource_providers/{UUID}", {"name": "cn1-new"})
    assert response.status_code == 200
    rid = nova.delete(f"/resource_providers/{UUID}")["x-openstack-request-id"]

    found = entries(UUID)
    assert [e.action for e in found] == [
        "create", "inventories", "traits", "aggregates", "update", "delete"]
    assert len({e.request_id for e in found}) == 6
    assert all((e.actor, e.project_id) == ("nova", "service") for e in found)
    inventories, traits, aggregates = found[1:4]
    assert (inventories.before, inventories.after["inventories"]["VCPU"]["total"]) == (
        {"generation": 0, "inventories": {}}, 8)
    assert (traits.before, traits.after) == (
        {"generation": 1, "traits": []}, {"generation": 2, "traits": ["HW_CPU_X86_AVX2"]})
    assert aggregates.after == {"generation": 3,
                                "aggregates": ["8b1f5c1e-8d2c-4d8a-9a55-3a4b5c6d7e8f"]}
    assert found[-1].request_id == rid
    assert found[-1].before == {"name": "cn1-new", "parent": None, "generation": 3}
    assert found[-1].after is None


def test_api_single_inventory_writes(api):
    provider = make_provider("cn1", inventory={"VCPU": 8})
    log_from_here()
    base = f"/resource_providers/{provider.uuid}/inventories"
    assert api.post(base, {"resource_class": "DISK_GB", "total": 100}).status_code == 201
    assert api.put(f"{base}/DISK_GB", {"resource_provider_generation": 2,
                                       "total": 200}).status_code == 200
    assert api.delete(f"{base}/DISK_GB").status_code == 204
    assert api.delete(base).status_code == 204
    create, update, delete_one, delete_all = entries(provider.uuid)
    assert set(create.after["inventories"]) == {"VCPU", "DISK_GB"}
    assert (update.before["inventories"]["DISK_GB"]["total"],
            update.after["inventories"]["DISK_GB"]["total"]) == (100, 200)
    assert delete_one.action == "inventory_delete"
    assert set(delete_one.before["inventories"]) == {"DISK_GB"}
    assert (set(delete_all.before["inventories"]), delete_all.after["inventories"]) == (
        {"VCPU"}, {})


def test_api_class_and_trait_writes_and_conflicts(api):
    assert api.put("/resource_classes/CUSTOM_GOLD").status_code == 201
    assert api.put("/resource_classes/CUSTOM_GOLD").status_code == 204  # exists: no write
    assert api.put("/traits/CUSTOM_FAST").status_code == 201
    assert api.delete("/traits/CUSTOM_FAST").status_code == 204
    assert [e.action for e in entries("CUSTOM_GOLD", "resource_class")] == ["create"]
    assert [e.action for e in entries("CUSTOM_FAST", "trait")] == ["create", "delete"]
    provider = make_provider("cn1")
    log_from_here()
    response = api.put(f"/resource_providers/{provider.uuid}/traits",
                       {"resource_provider_generation": 5, "traits": []})
    assert response.status_code == 409
    assert entries(provider.uuid) == []


# --------------------------------------------------------------------------
# UI and admin: the login
# --------------------------------------------------------------------------

@pytest.fixture
def operator_client(django_user_model):
    user = django_user_model.objects.create_superuser("operator", "op@example.invalid", "pw")
    client = Client()
    client.force_login(user)
    return client


def test_ui_write_records_the_login(operator_client):
    provider = make_provider("cn1", inventory={"VCPU": 8})
    log_from_here()
    response = operator_client.post(
        reverse("ui:provider-traits", args=[provider.uuid]),
        {"generation": 1, "traits": "HW_CPU_X86_AVX2"})
    assert response.status_code == 302
    entry = only(provider.uuid)
    assert (entry.action, entry.actor, entry.project_id) == ("traits", "ui:operator", "")
    assert entry.request_id == response["x-openstack-request-id"]
    assert entry.after["traits"] == ["HW_CPU_X86_AVX2"]


def test_ui_dry_run_of_a_confirmed_change_records_nothing(operator_client):
    provider = make_provider("cn1", inventory={"VCPU": 8})
    log_from_here()
    response = operator_client.post(
        reverse("ui:provider-inventory", args=[provider.uuid]),
        {"generation": 1, "resource_class": "VCPU", "action": "delete"})
    assert response.status_code == 200 and response.context["confirm"]
    assert entries(provider.uuid) == []


def test_admin_edit_records_the_login(operator_client):
    provider = make_provider("cn1", inventory={"VCPU": 8})
    log_from_here()
    url = reverse("admin:providers_resourceprovider_change", args=[provider.pk])
    page = operator_client.get(url)
    data = {}
    form = page.context["adminform"].form
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        data[name] = "" if value is None else value
    for formset in page.context["inline_admin_formsets"]:
        management = formset.formset.management_form
        for name in management.fields:
            data[f"{management.prefix}-{name}"] = management.initial.get(name, 0)
        for index, inline_form in enumerate(formset.formset.forms):
            for name, field in inline_form.fields.items():
                value = inline_form.initial.get(name, field.initial)
                if hasattr(value, "pk"):
                    value = value.pk
                if value is not None:
                    data[f"{inline_form.prefix}-{name}"] = value
    data["name"] = "cn1-renamed"
    data.pop("parent", None)
    response = operator_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    entry = only(provider.uuid)
    assert (entry.action, entry.actor) == ("update", "admin:operator")
    assert entry.request_id == response["x-openstack-request-id"]
    assert entry.after == {"name": "cn1-renamed", "parent": None}


def test_admin_delete_records_the_login(operator_client):
    provider = make_provider("cn1")
    log_from_here()
    url = reverse("admin:providers_resourceprovider_delete", args=[provider.pk])
    # the confirmation page tries the delete and rolls it back: nothing recorded
    assert operator_client.get(url).status_code == 200
    assert entries(provider.uuid) == []
    assert operator_client.post(url, {"post": "yes"}).status_code == 302
    entry = only(provider.uuid)
    assert (entry.action, entry.actor) == ("delete", "admin:operator")


def test_admin_consumer_delete_records_the_login(operator_client):
    provider = make_provider("cn1", inventory={"VCPU": 8})
    allocation_services.allocations_replace(consumers=[allocation_services.ConsumerAllocations(
        UUID, "proj", "user", {provider.uuid: {"VCPU": 2}}, generation=None)])
    consumer_pk = Consumer.objects.get(uuid=UUID).pk
    response = operator_client.post(
        reverse("admin:allocations_consumer_delete", args=[consumer_pk]), {"post": "yes"})
    assert response.status_code == 302
    deleted = entries(UUID, "consumer")[-1]
    assert (deleted.action, deleted.actor, deleted.after) == ("delete", "admin:operator", None)
    assert deleted.before == {"generation": 1, "allocations": {provider.uuid: {"VCPU": 2}}}


def test_admin_lists_the_change_log_read_only(operator_client):
    make_provider("cn1")
    provider_services.provider_create(name="cn2", uuid=UUID)
    response = operator_client.get(reverse("admin:providers_changerecord_changelist"),
                                   {"q": UUID})
    assert response.status_code == 200
    assert UUID in response.content.decode()
    assert operator_client.get(reverse("admin:providers_changerecord_add")).status_code == 403


def test_admin_change_log_filters_by_date_without_reading_every_entry(operator_client):
    """A date hierarchy read every entry's date for its links (in Python per row on
    SQLite): 400 ms at 100,000 entries. The date filter's links are ranges."""
    now = timezone.now()
    ChangeRecord.objects.bulk_create([
        ChangeRecord(kind="trait", entity=f"CUSTOM_T{days}", action="create", actor="system",
                     created_at=now - timedelta(days=days)) for days in (0, 3, 20, 60)])
    url = reverse("admin:providers_changerecord_changelist")
    with CaptureQueriesContext(connection) as queries:
        page = operator_client.get(url)
    assert not [q for q in queries if "trunc" in q["sql"].lower()]
    (recent,) = [choice for spec in page.context["cl"].filter_specs
                 if spec.title == "created at" for choice in spec.choices(page.context["cl"])
                 if choice["display"] == "Past 7 days"]
    shown = operator_client.get(url + recent["query_string"] + "&q=CUSTOM_T").context["cl"]
    assert sorted(e.entity for e in shown.result_list) == ["CUSTOM_T0", "CUSTOM_T3"]


# --------------------------------------------------------------------------
# Commands: command:<name>, one request id per run
# --------------------------------------------------------------------------

def test_import_tree_command_records_the_command(tmp_path):
    document = {"format": "placement-tree/1", "providers": [{"uuid": UUID, "name": "cn1",
                               "inventories": {"VCPU": {"total": 8}},
                               "traits": ["HW_CPU_X86_AVX2"]}]}
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(document))
    call_command("import_tree", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    found = entries(UUID)
    assert [e.action for e in found] == ["create", "inventories", "traits"]
    assert {e.actor for e in found} == {"command:import_tree"}
    assert {e.project_id for e in found} == {""}
    assert len({e.request_id for e in found}) == 1
    assert found[0].request_id.startswith("req-")


def test_sync_standard_command_records_the_names_it_adds():
    Trait.objects.filter(name="HW_CPU_X86_AVX2").delete()
    ChangeRecord.objects.filter(kind="trait", entity="HW_CPU_X86_AVX2").delete()
    call_command("sync_standard", stdout=io.StringIO())
    entry = only("HW_CPU_X86_AVX2", "trait")
    assert (entry.action, entry.actor, entry.after) == (
        "create", "command:sync_standard", {"name": "HW_CPU_X86_AVX2"})
    call_command("sync_standard", stdout=io.StringIO())  # nothing to add: nothing recorded
    assert len(entries("HW_CPU_X86_AVX2", "trait")) == 1


# --------------------------------------------------------------------------
# Retention
# --------------------------------------------------------------------------

def _aged(days, entity):
    return ChangeRecord.objects.create(
        kind="provider", entity=entity, action="create", actor="x",
        created_at=timezone.now() - timedelta(days=days))


def test_prune_deletes_entries_past_retention(settings):
    settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS = 30
    old, recent = _aged(31, "old"), _aged(29, "recent")
    assert change_log.change_log_prune() == 1
    assert not ChangeRecord.objects.filter(pk=old.pk).exists()
    assert ChangeRecord.objects.filter(pk=recent.pk).exists()
    assert change_log.change_log_prune(days=10) == 1
    settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS = 0  # keep everything
    _aged(1000, "ancient")
    assert change_log.change_log_prune() == 0


def test_writes_prune_at_most_once_an_hour_after_commit(settings, monkeypatch,
                                                        django_capture_on_commit_callbacks):
    settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS = 30
    monkeypatch.setattr(change_log, "_last_prune", None)
    _aged(31, "old")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        make_provider("cn1")
        provider_services.provider_create(name="cn2", uuid=UUID)
    assert len(callbacks) == 1
    assert not ChangeRecord.objects.filter(entity="old").exists()
    _aged(31, "old")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        provider_services.provider_update(uuid=UUID, name="cn2-b")
    assert callbacks == []  # within the hour: no second prune
    assert ChangeRecord.objects.filter(entity="old").exists()
    monkeypatch.setattr(change_log, "_last_prune",
                        change_log._last_prune - change_log.PRUNE_INTERVAL_SECONDS)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        provider_services.provider_update(uuid=UUID, name="cn2-c")
    assert len(callbacks) == 1
    assert not ChangeRecord.objects.filter(entity="old").exists()


def test_prune_change_log_command(settings):
    settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS = 90
    _aged(100, "a"), _aged(50, "b"), _aged(1, "c")
    out = io.StringIO()
    call_command("prune_change_log", stdout=out)
    assert "Deleted 1 change log entries older than 90 days" in out.getvalue()
    call_command("prune_change_log", "--days", "7", stdout=out)
    assert set(ChangeRecord.objects.filter(entity__in="abc").values_list("entity", flat=True)) \
        == {"c"}


def test_retention_option_from_file_and_environment(tmp_path):
    conf = tmp_path / "placement.conf"
    conf.write_text("[placement]\nchange_log_retention_days = 14\n")
    assert config.load({"PLACEMENT_CONFIG_FILE": str(conf)}).placement \
        .change_log_retention_days == 14
    assert config.load({"PLACEMENT_CHANGE_LOG_RETENTION_DAYS": "0"}).placement \
        .change_log_retention_days == 0
    assert config.load({}).placement.change_log_retention_days == 90
    with pytest.raises(config.ConfigError, match="change_log_retention_days"):
        config.load({"PLACEMENT_CHANGE_LOG_RETENTION_DAYS": "-1"})
    assert ResourceProvider.objects.count() == 0
