"""The console's one door (console/door.py) with local accounts: every console URL and
method against anonymous, a reader, a staff account without permissions, an operator
and a superuser; what the door refuses writes nothing."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, reverse

from allocations.models import Allocation
from console import urls as console_urls
from console.groups import OPERATORS, READERS
from providers.models import ChangeRecord, Inventory, ProviderAggregate, ProviderTrait, ResourceClass, Trait

LOGIN = "/admin/login/"


def console_routes():
    """(url name, view, route pattern) of every console URL."""
    return [(pattern.name, pattern.callback, str(pattern.pattern))
            for pattern in console_urls.urlpatterns if isinstance(pattern, URLPattern)]


def test_every_console_view_declares_what_it_reads_and_writes():
    undeclared = [name for name, view, _ in console_routes()
                  if getattr(view, "console_need", None) is None]
    assert undeclared == []
    assert len(console_routes()) >= 30


def test_the_walk_sees_a_view_without_a_declaration(monkeypatch):
    def bare(request):
        return None

    monkeypatch.setattr(console_urls, "urlpatterns",
                        [*console_urls.urlpatterns, URLPattern("bare/", bare, name="bare")])
    assert [name for name, view, _ in console_routes()
            if getattr(view, "console_need", None) is None] == ["bare"]


def _args(route, sample, record):
    """The URL arguments of a route, from the sample cloud."""
    args = {}
    if "<str:uuid>" in route:
        args["uuid"] = (sample["vm2"].uuid if route.startswith("consumers/")
                        else sample["cn2"].uuid)
    if "<str:name>" in route:
        args["name"] = "CUSTOM_DOOR"
    if "<int:record_id>" in route:
        args["record_id"] = record.id
    if "<str:request_id>" in route:
        args["request_id"] = record.request_id or "req-none"
    return args


def _state():
    """What a refused request must leave as it was."""
    return (ChangeRecord.objects.count(),
            sorted(Inventory.objects.values_list("provider_id", "resource_class_id", "total",
                                                 "reserved", "allocation_ratio")),
            sorted(Allocation.objects.values_list("consumer_id", "provider_id", "used")),
            ProviderTrait.objects.count(), ProviderAggregate.objects.count(),
            ResourceClass.objects.count(), Trait.objects.count())


def _user(name, *, staff=True, superuser=False, group=None):
    model = get_user_model()
    if superuser:
        return model.objects.create_superuser(name, f"{name}@example.invalid", "pw")
    user = model.objects.create_user(name, password="pw", is_staff=staff)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


ROLES = {
    # role: (may read, may write)
    "anonymous": (False, False),
    "reader": (True, False),
    "staff without permissions": (True, False),
    "operator": (True, True),
    "superuser": (True, True),
}


@pytest.fixture
def clients(db):
    made = {"anonymous": Client(),
            "reader": _user("rita", group=READERS),
            "staff without permissions": _user("stan"),
            "operator": _user("olga", group=OPERATORS),
            "superuser": _user("sue", superuser=True)}
    for role, user in list(made.items()):
        if role != "anonymous":
            made[role] = Client()
            made[role].force_login(user)
    return made


# A POST body each write form would take (what the door refuses never gets that far).
POSTS = {
    "provider-inventory": {"resource_class": "DISK_GB", "total": "2222", "action": "save"},
    "provider-traits": {"traits": ""},
    "provider-aggregates": {"aggregates": ""},
    "resource-classes": {"name": "CUSTOM_DOOR"},
    "traits": {"name": "CUSTOM_DOOR"},
    "consumer-remove": {}, "consumer-remove-one": {},
}


def test_the_role_matrix(clients, sample):
    """Every console URL, GET and POST, for each role: the login page, a 403, or the page
    (whatever the view then answers); a refused request writes nothing."""
    record = ChangeRecord.objects.order_by("id").first()
    checked = 0
    for name, view, route in console_routes():
        need = view.console_need
        url = reverse(f"ui:{name}", kwargs=_args(route, sample, record))
        for method in ("get", "post"):
            writes = method == "post" and not need.post_reads
            for role, (may_read, may_write) in ROLES.items():
                if writes and need.write is None:
                    continue   # a read-only view: POST is not a way in (405 below)
                data = POSTS.get(name, {}) if method == "post" else {}
                if name == "provider-inventory" and method == "post":
                    data = {**data, "generation": str(sample["cn2"].generation)}
                before = _state()
                response = getattr(clients[role], method)(url, data)
                where = f"{method.upper()} {url} as {role}"
                if not may_read:
                    assert response.status_code == 302, where
                    assert response["Location"].startswith(LOGIN), where
                elif writes and not may_write:
                    assert response.status_code == 403, where
                else:
                    assert response.status_code not in (302, 403) or (
                        response.status_code == 302
                        and not response["Location"].startswith(LOGIN)), where
                if response.status_code in (302, 403) and (
                        not may_read or (writes and not may_write)):
                    assert _state() == before, f"{where} wrote"
                checked += 1
    assert checked > 150


def test_a_read_only_view_takes_no_post(clients, sample):
    response = clients["operator"].post(reverse("ui:capacity"))
    assert response.status_code == 405


def test_the_unprivileged_write_of_the_walk_is_refused_and_reading_still_works(clients, sample):
    """The operator walk's finding: a staff account with no permissions set an
    inventory's total through the provider page."""
    stan = clients["staff without permissions"]
    cn2 = sample["cn2"]
    page = reverse("ui:provider", args=[cn2.uuid])
    assert stan.get(page).status_code == 200
    response = stan.post(reverse("ui:provider-inventory", args=[cn2.uuid]),
                         {"resource_class": "VCPU", "total": "2222", "action": "save",
                          "generation": str(cn2.generation)})
    assert response.status_code == 403
    assert Inventory.objects.get(provider=cn2, resource_class__name="VCPU").total == 16
    response = clients["operator"].post(
        reverse("ui:provider-inventory", args=[cn2.uuid]),
        {"resource_class": "VCPU", "total": "2222", "action": "save",
         "generation": str(cn2.generation)})
    assert response.status_code in (200, 302)
    assert Inventory.objects.get(provider=cn2, resource_class__name="VCPU").total == 2222


def test_the_shipped_groups(db):
    readers, operators = Group.objects.get(name=READERS), Group.objects.get(name=OPERATORS)
    reader_codenames = set(readers.permissions.values_list("codename", flat=True))
    assert "view_inventory" in reader_codenames
    assert not any(not c.startswith("view_") for c in reader_codenames)
    assert {"change_inventory", "delete_allocation", "add_trait"} <= set(
        operators.permissions.values_list("codename", flat=True))


def test_the_admin_follows_the_same_rules(clients, sample):
    """A reader sees the admin's provider list and cannot change a provider there."""
    cn2 = sample["cn2"]
    reader = clients["reader"]
    assert reader.get("/admin/providers/resourceprovider/").status_code == 200
    change = f"/admin/providers/resourceprovider/{cn2.pk}/change/"
    before = _state()
    response = reader.post(change, {"name": "renamed"})
    assert response.status_code == 403
    assert _state() == before
    assert clients["operator"].get(change).status_code == 200


def test_every_write_names_its_local_author(clients, sample):
    cn2 = sample["cn2"]
    clients["operator"].post(reverse("ui:provider-inventory", args=[cn2.uuid]),
                             {"resource_class": "VCPU", "total": "20", "action": "save",
                              "generation": str(cn2.generation)})
    entry = ChangeRecord.objects.filter(entity=cn2.uuid).order_by("-id").first()
    assert entry.actor == "ui:olga"


@pytest.mark.parametrize("next_url, lands", [
    ("//evil.example/", "/ui/"),
    ("https://evil.example/ui/", "/ui/"),
    ("", "/ui/"),
    ("/ui/capacity/", "/ui/capacity/"),
])
def test_a_login_goes_only_to_this_site(db, next_url, lands):
    _user("olga", group=OPERATORS)
    client = Client()
    response = client.post(f"{LOGIN}?next={next_url}" if next_url else LOGIN,
                           {"username": "olga", "password": "pw", "next": next_url})
    assert response.status_code == 302
    assert response["Location"] == lands
    assert client.get(lands).status_code == 200


# --- a Keystone login's session, without a Keystone: the identity the login keeps ------

def _keystone_client(settings, roles, expires_in):
    from dataclasses import asdict
    from datetime import datetime, timedelta, timezone

    from console.keystone import SESSION_KEY, Identity, _operator

    settings.AUTHENTICATION_BACKENDS = ["console.keystone.KeystoneBackend"]
    identity = Identity(user_id="u-1", user_name="kate", domain_name="Default",
                        project_id="p-1", project_name="demo", roles=roles,
                        expires_at=(datetime.now(timezone.utc)
                                    + timedelta(seconds=expires_in)).isoformat())
    client = Client()
    client.force_login(_operator(identity), backend="console.keystone.KeystoneBackend")
    session = client.session
    session[SESSION_KEY] = asdict(identity)
    session.save()
    return client


def test_a_keystone_session_ends_with_its_token(settings, sample):
    client = _keystone_client(settings, ["admin", "member", "reader"], expires_in=-1)
    response = client.get(reverse("ui:dashboard"))
    assert response.status_code == 302 and response["Location"].startswith(LOGIN)


def test_keystone_roles_decide_through_policy(settings, sample):
    cn2 = sample["cn2"]
    url = reverse("ui:provider-inventory", args=[cn2.uuid])
    data = {"resource_class": "VCPU", "total": "30", "action": "save",
            "generation": str(cn2.generation)}
    reader = _keystone_client(settings, ["reader"], expires_in=3600)
    assert reader.get(reverse("ui:provider", args=[cn2.uuid])).status_code == 200
    assert reader.post(url, data).status_code == 403
    assert reader.get("/admin/providers/resourceprovider/").status_code == 200
    assert reader.get(f"/admin/providers/resourceprovider/{cn2.pk}/change/").status_code == 200
    nobody = _keystone_client(settings, [], expires_in=3600)
    assert nobody.get(reverse("ui:provider", args=[cn2.uuid])).status_code == 403
    admin = _keystone_client(settings, ["admin", "member", "reader"], expires_in=3600)
    assert admin.post(url, data).status_code in (200, 302)
    assert Inventory.objects.get(provider=cn2, resource_class__name="VCPU").total == 30
    entry = ChangeRecord.objects.filter(entity=cn2.uuid).order_by("-id").first()
    assert (entry.actor, entry.project_id) == ("ui:keystone:kate@Default", "p-1")


def test_every_write_rule_a_view_declares_has_a_django_permission():
    from console.door import PERMISSIONS

    declared = {need.write for _, view, _ in console_routes()
                for need in [view.console_need] if isinstance(need.write, str)}
    assert declared and declared <= set(PERMISSIONS)


def test_a_write_is_judged_as_a_write_even_under_its_read_rule(rf, clients, sample):
    """A view whose write rule is its read rule: a reader's POST is still a write."""
    from django.http import HttpResponse

    from console.door import SHOW_PROVIDER, door

    view = door(read=SHOW_PROVIDER, write=SHOW_PROVIDER)(lambda request: HttpResponse("ok"))
    request = rf.post("/ui/x")
    request.user = get_user_model().objects.get(username="rita")
    from django.core.exceptions import PermissionDenied
    with pytest.raises(PermissionDenied):
        view(request)
    request = rf.get("/ui/x")
    request.user = get_user_model().objects.get(username="rita")
    assert view(request).status_code == 200
