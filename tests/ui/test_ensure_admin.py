"""manage.py ensure_admin: a development superuser, only when there is none."""
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def run(*args):
    out = StringIO()
    call_command("ensure_admin", *args, stdout=out)
    return out.getvalue()


def test_creates_admin_once():
    users = get_user_model().objects
    assert "Created superuser 'admin'" in run()
    admin = users.get(username="admin")
    assert admin.is_superuser and admin.is_staff and admin.check_password("admin")
    assert "nothing to do" in run()
    assert users.count() == 1


def test_existing_superuser_means_nothing_to_do():
    get_user_model().objects.create_superuser("root", "r@example.invalid", "secret")
    assert "nothing to do" in run()
    assert not get_user_model().objects.filter(username="admin").exists()


def test_promotes_an_existing_plain_user_keeping_its_password():
    get_user_model().objects.create_user("admin", password="mine")
    assert "Promoted" in run()
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password("mine")


def test_created_admin_can_open_the_ui():
    from django.test import Client
    run("--username", "boss", "--password", "pw")
    web = Client()
    assert web.login(username="boss", password="pw")
    assert web.get("/ui/").status_code == 200
