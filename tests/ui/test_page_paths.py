"""Non-API paths answer like Django pages (HTML, slash redirects), never Placement's JSON."""
import uuid

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path, target", [
    ("/ui", "/ui/"), ("/admin", "/admin/"),
    ("/ui/providers", "/ui/providers/"), ("/admin/login", "/admin/login/"),
])
def test_missing_slash_redirects_to_the_page(path, target):
    response = Client().get(path)
    assert response.status_code == 301
    assert response["Location"] == target
    assert "application/json" not in response.get("Content-Type", "")


def test_slash_redirect_keeps_the_query():
    response = Client().get("/ui/providers?q=cn1")
    assert response["Location"] == "/ui/providers/?q=cn1"


def test_unknown_provider_page_is_an_html_404(client):
    response = client.get(f"/ui/providers/{uuid.uuid4()}/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "<h1>Not found</h1>" in response.content.decode()


def test_unknown_page_path_is_an_html_404_without_redirect(client):
    response = client.get("/ui/nothing-here")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_favicon_needs_no_token():
    response = Client().get("/favicon.ico")   # the pages' icon (issue 43), not an API 401
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"


def test_api_paths_keep_placement_answers():
    client = Client()
    assert client.get("/resource_providers").status_code == 401  # no token
    response = client.get("/resource_providers/", HTTP_X_AUTH_TOKEN="admin")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert client.get("/uix", HTTP_X_AUTH_TOKEN="admin")["Content-Type"].startswith(
        "application/json")


@pytest.mark.parametrize("path", [
    "/ui/search/?q=%00", "/ui/search/?find=cn%00", "/ui/traits/?q=%00",
    "/ui/providers/?required=%00", "/ui/providers.csv?required=HW%00",
    "/admin/providers/changerecord/?q=%00", "/ui/providers/?x%00=1",
])
def test_a_nul_in_a_pages_query_is_said_not_a_500(client, path):
    """Found by an operator walk on PostgreSQL: the search box, the traits filter, the
    provider list's traits and the admin's search sent it to the database (a 500)."""
    response = client.get(path)
    assert response.status_code == 400
    assert "holds a NUL character (%00) in its query string" in response.content.decode()
