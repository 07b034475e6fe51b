"""Identity on the operator pages: a CSRF refusal a JSON client can read, cookies kept
to HTTPS when the page came over it, and the development login admin/admin refused
beyond loopback."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from foundation import config, development_login

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")


@pytest.fixture
def csrf_client(staff):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    return client


def test_a_csrf_refusal_is_json_to_a_json_client(csrf_client):
    response = csrf_client.post("/admin/auth/user/add/", {"username": "x"},
                                HTTP_ACCEPT="application/json")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    error = response.json()["errors"][0]
    assert error["title"] == "Forbidden"
    assert "CSRF verification failed" in error["detail"]


@pytest.mark.parametrize("accept", [
    None, "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"])
def test_a_csrf_refusal_is_djangos_page_to_a_browser(csrf_client, accept):
    extra = {"HTTP_ACCEPT": accept} if accept else {}
    response = csrf_client.post("/admin/auth/user/add/", {"username": "x"}, **extra)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    assert b"CSRF verification failed" in response.content


def login(client, **extra):
    client.get("/admin/login/", **extra)
    return client.post("/admin/login/?next=/admin/", {
        "username": "operator", "password": "pw",
        "csrfmiddlewaretoken": client.cookies["csrftoken"].value}, **extra)


@pytest.mark.parametrize("extra, secure", [
    ({}, False),
    ({"secure": True}, True),                         # TLS at the server
    ({"HTTP_X_FORWARDED_PROTO": "https"}, False),     # not believed by default
])
def test_cookies_are_secure_when_the_page_came_over_https(staff, extra, secure):
    response = login(Client(), **extra)
    assert response.status_code == 302
    assert bool(response.cookies["sessionid"]["secure"]) is secure
    assert bool(response.cookies["csrftoken"]["secure"]) is secure


def test_a_trusted_proxys_forwarded_proto_makes_them_secure(staff, settings):
    """[oslo_middleware] enable_proxy_headers_parsing: X-Forwarded-Proto is believed."""
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    response = login(Client(), HTTP_X_FORWARDED_PROTO="https")
    assert response.cookies["sessionid"]["secure"] is True


def test_the_proxy_option_sets_djangos_header(tmp_path):
    conf = tmp_path / "placement.conf"
    conf.write_text("[oslo_middleware]\nenable_proxy_headers_parsing = true\n")
    assert config.load({"PLACEMENT_CONFIG_FILE": str(conf)}) \
        .oslo_middleware.enable_proxy_headers_parsing is True


@pytest.mark.parametrize("bind, loopback", [
    ("127.0.0.1:8000", True), ("localhost:8000", True), ("[::1]:8000", True),
    ("unix:/run/placement.sock", True), ("127.0.0.1", True),
    ("0.0.0.0:8000", False), ("[::]:8000", False), ("10.0.0.5:8778", False),
    ("placement.example.com:8778", False),
])
def test_loopback_binds(bind, loopback):
    assert development_login.is_loopback(bind) is loopback


@pytest.mark.django_db(transaction=True)
def test_the_development_login_is_refused_beyond_loopback(settings, capsys, caplog):
    get_user_model().objects.create_superuser("admin", "a@example.invalid", "admin")
    with pytest.raises(SystemExit) as stopped:
        development_login.check_at_start(["127.0.0.1:8000", "0.0.0.0:8778"])
    assert stopped.value.code == 4
    line = capsys.readouterr().err.strip()
    assert "\n" not in line
    assert "development login admin/admin works" in line and "0.0.0.0:8778" in line
    # on loopback, or allowed explicitly: it starts, warning loudly
    development_login.check_at_start(["127.0.0.1:8000"])
    settings.PLACEMENT_ALLOW_DEVELOPMENT_LOGIN = True
    development_login.check_at_start(["0.0.0.0:8778"])
    assert [r.levelname for r in caplog.records].count("WARNING") == 2
    assert "THE DEVELOPMENT LOGIN admin/admin WORKS" in caplog.records[-1].message


@pytest.mark.django_db(transaction=True)
def test_a_changed_password_is_no_development_login():
    admin = get_user_model().objects.create_superuser("admin", "a@example.invalid", "admin")
    admin.set_password("a long and private one")
    admin.save()
    development_login.check_at_start(["0.0.0.0:8778"])  # starts, nothing to say


def test_gunicorn_refuses_to_serve_admin_admin_beyond_loopback(tmp_path):
    environ = {k: v for k, v in os.environ.items()
               if k not in config.ENVIRONMENT and k != "PROMETHEUS_MULTIPROC_DIR"}
    environ.update(DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3",
                   PLACEMENT_DATA_DIR=str(tmp_path))
    for command in (["migrate", "--noinput", "-v0"], ["ensure_admin"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=environ,
                       check=True, capture_output=True)
    started = subprocess.run(
        [str(GUNICORN), "placement_site.wsgi:application",
         "--config", "python:placement_site.gunicorn_conf", "--bind", "0.0.0.0:0"],
        cwd=ROOT, env={**environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus")},
        capture_output=True, text=True, timeout=120)
    assert started.returncode != 0
    assert "placement: configuration error: the development login admin/admin works" \
        in started.stderr
