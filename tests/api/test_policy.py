"""Every policy-protected endpoint under every server profile (policy.md, conformance
README): who may call what with the default (legacy) rules, with the new defaults
(secure-rbac) and with every rule opened to "@" (open-policy).

Each test walks one endpoint for every persona. A persona's request runs in a
savepoint that is rolled back, so every persona meets the same data; an allowed
request must succeed, a refused one is a 403 naming the rule and changes nothing.
"""
import json
import os
import time
import uuid as uuidlib

import pytest
from django.db import transaction

from allocations.models import Allocation, Consumer
from foundation.api import policy
from foundation.api.policy import ENDPOINT_RULES
from providers.models import (
    Inventory,
    ProviderAggregate,
    ProviderTrait,
    ResourceClass,
    ResourceProvider,
    Trait,
)
from tests.conftest import PlacementClient, error_code, error_detail
from tests.factories import allocate, make_consumer, make_provider

PROJECT = "PROJ"
OTHER_PROJECT = "OTHER"

# name: (X-Auth-Token, extra headers). Roles are listed as Keystone would imply them.
PERSONAS = {
    "admin": ("admin", {}),
    "project-admin": ("alice:" + PROJECT, {"X-Roles": "admin,member,reader"}),
    "service": ("nova:services", {"X-Roles": "service"}),
    "member-reader": ("bob:" + PROJECT, {"X-Roles": "member,reader"}),
    "reader": ("carol:" + PROJECT, {"X-Roles": "reader"}),
    "reader-by-header": ("user", {"X-Roles": "reader", "X-Project-Id": PROJECT}),
    "member": ("dave:" + PROJECT, {"X-Roles": "member"}),
    "no-roles": ("user", {}),
    "system-admin": ("admin", {"X-Roles": "admin,member,reader",
                               "OpenStack-System-Scope": "all"}),
    "system-service": ("nova", {"X-Roles": "service", "OpenStack-System-Scope": "all"}),
}
ADMINS = {"admin", "project-admin"}
SERVICES = {"service"}
PROJECT_READERS = {"member-reader", "reader", "reader-by-header"}
SYSTEM_SCOPED = {"system-admin", "system-service"}

PROFILES = ["default", "legacy-rbac", "secure-rbac", "open-policy"]


@pytest.fixture
def profile_settings(settings, tmp_path):
    """Apply a conformance profile the way scripts/conformance-server does."""
    def apply(profile):
        settings.PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS = profile == "secure-rbac"
        if profile == "open-policy":
            path = tmp_path / "policy.yaml"
            path.write_text("".join(f'"{name}": "@"\n' for name in ENDPOINT_RULES))
            settings.PLACEMENT_POLICY_FILE = str(path)
    return apply


class World:
    """rp: VCPU 8 with one allocation of consumer `consumer` (project PROJ) and a trait;
    spare: VCPU 4, unused; a custom class and a custom trait nobody uses."""

    def __init__(self):
        self.rp = make_provider("rp", inventory={"VCPU": 8}, traits=["HW_CPU_X86_SSE"])
        self.spare = make_provider("spare", inventory={"VCPU": 4})
        self.consumer = make_consumer(project=PROJECT, user="u1")
        allocate(self.consumer, self.rp, VCPU=1)
        ResourceClass.objects.create(name="CUSTOM_FREE")
        Trait.objects.create(name="CUSTOM_FREE")


def consumer_allocations(world):
    return {"allocations": {world.rp.uuid: {"resources": {"VCPU": 1}}},
            "project_id": PROJECT, "user_id": "u2", "consumer_generation": None,
            "consumer_type": "INSTANCE"}


RP = "/resource_providers/{rp}"
SPARE = "/resource_providers/{spare}"
NEW_CONSUMER = "11111111-2222-3333-4444-555555555555"

# (method, path, rule, body(world) or None, status of an allowed request)
ENDPOINTS = [
    ("GET", "/resource_providers", "placement:resource_providers:list", None, 200),
    ("POST", "/resource_providers", "placement:resource_providers:create",
     lambda w: {"name": "new"}, 200),
    ("GET", RP, "placement:resource_providers:show", None, 200),
    ("PUT", RP, "placement:resource_providers:update", lambda w: {"name": "renamed"}, 200),
    ("DELETE", SPARE, "placement:resource_providers:delete", None, 204),
    ("GET", RP + "/inventories", "placement:resource_providers:inventories:list", None, 200),
    ("POST", RP + "/inventories", "placement:resource_providers:inventories:create",
     lambda w: {"resource_class": "DISK_GB", "total": 10,
                "resource_provider_generation": 0}, 201),
    ("PUT", RP + "/inventories", "placement:resource_providers:inventories:update",
     lambda w: {"resource_provider_generation": w.rp.generation,
                "inventories": {"VCPU": {"total": 6}}},
     200),
    ("DELETE", SPARE + "/inventories", "placement:resource_providers:inventories:delete",
     None, 204),
    ("GET", RP + "/inventories/VCPU", "placement:resource_providers:inventories:show",
     None, 200),
    ("PUT", RP + "/inventories/VCPU", "placement:resource_providers:inventories:update",
     lambda w: {"resource_provider_generation": w.rp.generation, "total": 16}, 200),
    ("DELETE", SPARE + "/inventories/VCPU", "placement:resource_providers:inventories:delete",
     None, 204),
    ("GET", RP + "/usages", "placement:resource_providers:usages", None, 200),
    ("GET", RP + "/allocations", "placement:resource_providers:allocations:list", None, 200),
    ("GET", RP + "/aggregates", "placement:resource_providers:aggregates:list", None, 200),
    ("PUT", RP + "/aggregates", "placement:resource_providers:aggregates:update",
     lambda w: {"aggregates": [str(uuidlib.uuid4())],
                "resource_provider_generation": w.rp.generation},
     200),
    ("GET", RP + "/traits", "placement:resource_providers:traits:list", None, 200),
    ("PUT", RP + "/traits", "placement:resource_providers:traits:update",
     lambda w: {"traits": ["HW_CPU_X86_AVX"],
                "resource_provider_generation": w.rp.generation}, 200),
    ("DELETE", RP + "/traits", "placement:resource_providers:traits:delete", None, 204),
    ("GET", "/resource_classes", "placement:resource_classes:list", None, 200),
    ("POST", "/resource_classes", "placement:resource_classes:create",
     lambda w: {"name": "CUSTOM_NEW"}, 201),
    ("GET", "/resource_classes/VCPU", "placement:resource_classes:show", None, 200),
    ("PUT", "/resource_classes/CUSTOM_NEW", "placement:resource_classes:update", None, 201),
    ("DELETE", "/resource_classes/CUSTOM_FREE", "placement:resource_classes:delete",
     None, 204),
    ("GET", "/traits", "placement:traits:list", None, 200),
    ("GET", "/traits/CUSTOM_FREE", "placement:traits:show", None, 204),
    ("PUT", "/traits/CUSTOM_NEW", "placement:traits:update", None, 201),
    ("DELETE", "/traits/CUSTOM_FREE", "placement:traits:delete", None, 204),
    ("GET", "/allocations/{consumer}", "placement:allocations:list", None, 200),
    ("PUT", "/allocations/" + NEW_CONSUMER, "placement:allocations:update",
     consumer_allocations, 204),
    ("DELETE", "/allocations/{consumer}", "placement:allocations:delete", None, 204),
    ("POST", "/allocations", "placement:allocations:manage",
     lambda w: {NEW_CONSUMER: consumer_allocations(w)}, 204),
    ("GET", "/allocation_candidates?resources=VCPU:1",
     "placement:allocation_candidates:list", None, 200),
    ("GET", f"/usages?project_id={PROJECT}", "placement:usages", None, 200),
    ("GET", f"/usages?project_id={OTHER_PROJECT}", "placement:usages", None, 200),
    # Without project_id the target project is null: callers who pass the policy
    # meet the query schema (400).
    ("GET", "/usages", "placement:usages", None, 400),
    ("POST", "/reshaper", "placement:reshaper:reshape",
     lambda w: {"inventories": {w.spare.uuid: {
                    "resource_provider_generation": w.spare.generation,
                    "inventories": {"VCPU": {"total": 5}}}},
                "allocations": {}}, 204),
]


def allowed(profile, persona, method, path, rule):
    """policy.md §1-§4 and the conformance profiles."""
    if persona in SYSTEM_SCOPED:
        return False  # every rule is project-scoped, whatever the check string says
    if profile == "open-policy":
        return True
    if rule == "placement:reshaper:reshape":
        return persona in SERVICES or (persona in ADMINS and profile != "secure-rbac")
    if persona in ADMINS | SERVICES:
        return True
    return path == f"/usages?project_id={PROJECT}" and persona in PROJECT_READERS


def snapshot():
    """Everything a refused request could have changed."""
    return (
        sorted(ResourceProvider.objects.values_list("uuid", "name", "generation")),
        sorted(Inventory.objects.values_list("provider_id", "resource_class_id", "total")),
        sorted(Allocation.objects.values_list("consumer_id", "provider_id", "used")),
        sorted(Consumer.objects.values_list("uuid", "generation")),
        sorted(ResourceClass.objects.values_list("name", flat=True)),
        sorted(Trait.objects.values_list("name", flat=True)),
        sorted(ProviderTrait.objects.values_list("provider_id", "trait_id")),
        sorted(ProviderAggregate.objects.values_list("provider_id", "aggregate_id")),
    )


@pytest.mark.django_db
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("method, path, rule, body, success", ENDPOINTS,
                         ids=[f"{m} {p}" for m, p, *_ in ENDPOINTS])
def test_endpoint_policy_per_profile_and_persona(
        profile_settings, profile, method, path, rule, body, success):
    profile_settings(profile)
    world = World()
    url = path.format(rp=world.rp.uuid, spare=world.spare.uuid,
                      consumer=world.consumer.uuid)
    client = PlacementClient(version="latest")
    problems = []
    for persona, (token, headers) in PERSONAS.items():
        with transaction.atomic():
            before = snapshot()
            response = client.request(method, url, body=body(world) if body else None,
                                      token=token, headers=headers)
            changed = snapshot() != before
            transaction.set_rollback(True)
        if allowed(profile, persona, method, path, rule):
            if response.status_code != success:
                problems.append(f"{persona}: {response.status_code} "
                                f"{response.content[:200]!r}, expected {success}")
        elif response.status_code != 403:
            problems.append(f"{persona}: {response.status_code}, expected 403")
        else:
            if f"Policy does not allow {rule} to be performed." not in error_detail(response):
                problems.append(f"{persona}: 403 does not name {rule}")
            if error_code(response) != "placement.undefined_code":
                problems.append(f"{persona}: 403 code {error_code(response)}")
            if changed:
                problems.append(f"{persona}: refused request changed the database")
    assert not problems, "\n".join(problems)


def test_every_rule_of_the_spec_is_walked():
    assert {rule for _, _, rule, _, _ in ENDPOINTS} == set(ENDPOINT_RULES)


@pytest.mark.django_db
def test_policy_is_checked_before_the_resource_is_looked_up(make_api):
    """A refused caller learns nothing: 403, not the endpoint's 404 or 400."""
    user = make_api(token="user")
    missing = str(uuidlib.uuid4())
    for method, path in [("GET", f"/resource_providers/{missing}"),
                         ("GET", f"/resource_providers/{missing}/inventories/VCPU"),
                         ("DELETE", f"/resource_providers/{missing}"),
                         ("GET", "/resource_classes/CUSTOM_MISSING"),
                         ("DELETE", "/traits/CUSTOM_MISSING"),
                         ("GET", f"/allocations/{missing}"),
                         ("PUT", "/traits/not-a-trait")]:
        assert user.request(method, path).status_code == 403, (method, path)
    assert user.post("/resource_providers", {"bogus": 1}).status_code == 403
    assert user.get("/allocation_candidates?bogus=1").status_code == 403


@pytest.mark.django_db
def test_roles_compare_case_insensitively(make_api):
    client = make_api(token="user")
    assert client.get("/traits", headers={"X-Roles": "SERVICE"}).status_code == 200
    assert client.get("/traits", headers={"X-Roles": " Admin , other"}).status_code == 200


@pytest.mark.django_db
def test_admin_token_with_a_project_is_an_administrator(make_api):
    assert make_api(token="admin:admin").get("/resource_classes").status_code == 200
    assert make_api(token="admin:someproject").get("/resource_classes").status_code == 200


@pytest.mark.django_db
def test_usages_reader_target_is_the_last_project_id(make_api):
    reader = make_api(token=f"carol:{PROJECT}")
    headers = {"X-Roles": "reader"}
    ok = reader.get(f"/usages?project_id={OTHER_PROJECT}&project_id={PROJECT}",
                    headers=headers)
    assert ok.status_code == 200
    refused = reader.get(f"/usages?project_id={PROJECT}&project_id={OTHER_PROJECT}",
                         headers=headers)
    assert refused.status_code == 403


@pytest.mark.django_db
def test_system_scope_replaces_the_token_project(make_api):
    """A system-scoped token has no project: refused even with open rules that compare
    projects; an explicit X-Project-Id does not lift the scope check."""
    reader = make_api(token=f"carol:{PROJECT}")
    response = reader.get(f"/usages?project_id={PROJECT}", headers={
        "X-Roles": "reader", "OpenStack-System-Scope": "all", "X-Project-Id": PROJECT})
    assert response.status_code == 403


@pytest.mark.django_db
def test_operator_override_is_used_as_written(settings, tmp_path, make_api):
    """An overridden rule is not ORed with its deprecated check (policy.md §2)."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"service_api": "role:service"}))
    settings.PLACEMENT_POLICY_FILE = str(path)
    cn = make_provider("cn")
    body = {"inventories": {cn.uuid: {"resource_provider_generation": 0,
                                      "inventories": {"VCPU": {"total": 4}}}},
            "allocations": {}}
    admin = make_api()
    assert admin.post("/reshaper", body).status_code == 403  # legacy mode, overridden
    assert admin.post("/reshaper", body, headers={"X-Roles": "service"}).status_code == 204


@pytest.mark.django_db
def test_policy_directories_and_yaml_files_are_read(settings, tmp_path, make_api):
    """oslo.policy's policy_dirs: files there override the policy file's rules."""
    (tmp_path / "policy.yaml").write_text('"placement:traits:list": "@"\n')
    policy_d = tmp_path / "policy.d"
    policy_d.mkdir()
    (policy_d / "50-traits.yaml").write_text("placement:resource_classes:list: '@'\n")
    settings.PLACEMENT_POLICY_FILE = str(tmp_path / "policy.yaml")
    settings.PLACEMENT_POLICY_DIRS = [str(policy_d)]
    user = make_api(token="user")
    assert user.get("/traits").status_code == 200
    assert user.get("/resource_classes").status_code == 200
    assert user.get("/resource_providers").status_code == 403


@pytest.mark.django_db
def test_decisions_are_remembered_until_the_policy_file_is_next_looked_at(
        settings, tmp_path, make_api, monkeypatch):
    path = tmp_path / "policy.yaml"
    path.write_text('"placement:traits:list": "@"\n')
    settings.PLACEMENT_POLICY_FILE = str(path)
    now = [1000.0]
    monkeypatch.setattr(policy.time, "monotonic", lambda: now[0])
    user, admin = make_api(token="user"), make_api()
    assert user.get("/traits").status_code == 200
    path.write_text('"placement:traits:list": "!"\n')
    os.utime(path, (time.time() + 5, time.time() + 5))
    now[0] += policy.POLICY_FILES_CHECKED_EVERY / 2
    assert user.get("/traits").status_code == 200        # remembered
    assert admin.get("/traits").status_code == 200       # the rules read last, for all
    now[0] += policy.POLICY_FILES_CHECKED_EVERY
    assert user.get("/traits").status_code == 403        # the file was looked at again
    assert admin.get("/traits").status_code == 403


@pytest.mark.django_db
def test_remembered_decisions_are_per_caller_and_target(make_api):
    reader = make_api(token=f"carol:{PROJECT}")
    headers = {"X-Roles": "reader"}
    for _ in range(2):
        assert reader.get(f"/usages?project_id={PROJECT}", headers=headers).status_code == 200
        assert reader.get(f"/usages?project_id={OTHER_PROJECT}",
                          headers=headers).status_code == 403
        assert reader.get(f"/usages?project_id={PROJECT}").status_code == 403   # no role
        assert make_api().get("/traits").status_code == 200
        assert make_api(token="user").get("/traits").status_code == 403
