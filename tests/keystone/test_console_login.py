"""The console with a real Keystone: operators log in with their Keystone credentials
(password or application credential) on a served Placement in keystone mode, and the
API's policy decides what each persona's console may do: a reader and a member read
and write nothing, an administrator writes; a policy file's override works in the
console as in the API; every write names the Keystone user and project."""
import re
import sqlite3
import uuid
from urllib.parse import urlparse

import requests

from tests.keystone.conftest import PASSWORD, PROJECT

VCPU = {"VCPU": {"total": 16}}


def provider(keystone, server):
    """A provider with 16 VCPU, made through the API by the administrator."""
    token = keystone.token("alice", ("project", PROJECT))
    status, _, created = server.request("POST", "/resource_providers", token,
                                        {"name": f"cn-{uuid.uuid4().hex[:8]}"})
    assert status == 200, created
    status, _, _ = server.request("PUT", f"/resource_providers/{created['uuid']}/inventories",
                                  token, {"resource_provider_generation": 0,
                                          "inventories": VCPU})
    assert status == 200
    return created["uuid"]


def total(keystone, server, rp):
    token = keystone.token("alice", ("project", PROJECT))
    status, _, body = server.request("GET", f"/resource_providers/{rp}/inventories", token)
    assert status == 200
    return body["inventories"]["VCPU"]["total"], body["resource_provider_generation"]


def login(server, **fields):
    """A requests.Session after posting `fields` to the login page, and that answer."""
    session = requests.Session()
    page = session.get(f"{server.url}/admin/login/?next=/ui/", timeout=30)
    assert page.status_code == 200
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    answer = session.post(f"{server.url}/admin/login/?next=/ui/",
                          data={"csrfmiddlewaretoken": csrf, "next": "/ui/", **fields},
                          headers={"Referer": f"{server.url}/admin/login/"},
                          allow_redirects=False, timeout=30)
    return session, answer


def password_login(server, user):
    session, answer = login(server, username=user, password=PASSWORD, project_name=PROJECT,
                            user_domain_name="Default", project_domain_name="Default")
    assert answer.status_code == 302 and urlparse(answer.headers["Location"]).path == "/ui/", (
        user, answer.status_code, answer.text[-2000:])
    return session


def set_total(server, session, rp, value, generation):
    """POST the provider page's inventory form: the answer's status."""
    page = session.get(f"{server.url}/ui/providers/{rp}/", timeout=30)
    csrf = session.cookies.get("csrftoken")
    answer = session.post(f"{server.url}/ui/providers/{rp}/inventory",
                          data={"csrfmiddlewaretoken": csrf, "resource_class": "VCPU",
                                "total": str(value), "action": "save",
                                "generation": str(generation)},
                          headers={"Referer": f"{server.url}/ui/providers/{rp}/"},
                          allow_redirects=False, timeout=30)
    return page.status_code, answer.status_code


def test_personas_in_the_console(keystone, make_placement):
    server = make_placement()
    rp = provider(keystone, server)
    for user, writes in (("rita", False), ("mike", False), ("alice", True)):
        session = password_login(server, user)
        for path in ("/ui/", f"/ui/providers/{rp}/", "/ui/capacity/", "/ui/consumers/",
                     "/admin/providers/resourceprovider/"):
            assert session.get(f"{server.url}{path}", timeout=30).status_code == 200, (user, path)
        before, generation = total(keystone, server, rp)
        page, answer = set_total(server, session, rp, before + 1, generation)
        assert page == 200
        if writes:
            assert answer in (200, 302), user
            assert total(keystone, server, rp)[0] == before + 1
        else:
            assert answer == 403, user
            assert total(keystone, server, rp)[0] == before


def test_wrong_credentials_and_application_credentials(keystone, make_placement):
    server = make_placement()
    session, answer = login(server, username="alice", password="wrong",
                            project_name=PROJECT)
    assert answer.status_code == 200 and "Keystone refused these credentials" in answer.text
    assert session.get(f"{server.url}/ui/", allow_redirects=False,
                       timeout=30).status_code == 302
    # an application credential of the administrator's
    token = keystone.token("alice", ("project", PROJECT))
    users = requests.get(f"{keystone.url}/users?name=alice",
                         headers={"X-Auth-Token": keystone.admin_token}, timeout=30).json()
    alice = users["users"][0]["id"]
    made = requests.post(f"{keystone.url}/users/{alice}/application_credentials",
                         json={"application_credential": {"name": f"console-{uuid.uuid4().hex[:6]}"}},
                         headers={"X-Auth-Token": token}, timeout=30)
    assert made.status_code == 201, made.text
    credential = made.json()["application_credential"]
    session, answer = login(server, application_credential_id=credential["id"],
                            application_credential_secret=credential["secret"])
    assert answer.status_code == 302
    rp = provider(keystone, server)
    before, generation = total(keystone, server, rp)
    assert set_total(server, session, rp, before + 2, generation)[1] in (200, 302)
    assert total(keystone, server, rp)[0] == before + 2


def test_a_policy_override_works_in_the_console(keystone, make_placement, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text('"placement:resource_providers:inventories:update": "role:reader"\n')
    server = make_placement(f"[oslo_policy]\npolicy_file = {policy}\n")
    rp = provider(keystone, server)
    session = password_login(server, "rita")
    before, generation = total(keystone, server, rp)
    assert set_total(server, session, rp, before + 3, generation)[1] in (200, 302)
    assert total(keystone, server, rp)[0] == before + 3
    # the change log names the Keystone user and the project of the token
    database = urlparse(server.conf.read_text().split("connection = ")[1].split()[0]).path
    with sqlite3.connect(database) as db:
        actor, project = db.execute("SELECT actor, project_id FROM change_records "
                                    "ORDER BY id DESC LIMIT 1").fetchone()
    assert actor == "ui:keystone:rita@Default"
    assert project == keystone.project_ids[PROJECT]


def test_every_console_url_for_each_persona(keystone, make_placement):
    """The role matrix against a real Keystone: every console URL, GET and POST, for the
    reader, member and administrator personas; what a refusal refuses writes nothing."""
    from console import urls as console_urls
    from django.urls import URLPattern

    server = make_placement()
    rp = provider(keystone, server)
    token = keystone.token("alice", ("project", PROJECT))
    consumer = str(uuid.uuid4())
    status, _, _ = server.request("PUT", f"/allocations/{consumer}", token, {
        "allocations": {rp: {"resources": {"VCPU": 1}}}, "consumer_generation": None,
        "project_id": keystone.project_ids[PROJECT], "user_id": "someone",
        "consumer_type": "INSTANCE"})
    assert status == 204
    database = urlparse(server.conf.read_text().split("connection = ")[1].split()[0]).path

    def records():
        with sqlite3.connect(database) as db:
            return db.execute("SELECT COUNT(*), MAX(id) FROM change_records").fetchone()

    record_id = records()[1]
    routes = [(p.name, p.callback.console_need, str(p.pattern))
              for p in console_urls.urlpatterns if isinstance(p, URLPattern)]

    def url(route):
        path = (route.replace("<str:uuid>", consumer if route.startswith("consumers/") else rp)
                .replace("<str:name>", "CUSTOM_DOOR").replace("<int:record_id>", str(record_id))
                .replace("<str:request_id>", "req-none"))
        return f"{server.url}/ui/{path}"

    for user, writes in (("rita", False), ("mike", False), ("alice", True)):
        session = password_login(server, user)
        for name, need, route in routes:
            answer = session.get(url(route), allow_redirects=False, timeout=60)
            assert answer.status_code not in (401, 403, 500), (user, "GET", route)
            assert "/admin/login/" not in answer.headers.get("Location", ""), (user, route)
            if need.write is None or need.post_reads:
                continue
            before = records()
            answer = session.post(url(route), data={
                "csrfmiddlewaretoken": session.cookies.get("csrftoken")},
                headers={"Referer": url(route)}, allow_redirects=False, timeout=60)
            if writes:
                assert answer.status_code not in (401, 403, 500), (user, "POST", route)
            else:
                assert answer.status_code == 403, (user, "POST", route, answer.status_code)
                assert records() == before, (user, route)
