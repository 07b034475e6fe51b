"""API requests skip Django's page middleware (PageMiddleware); pages keep all of it."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

PAGE_ONLY_HEADERS = ("X-Content-Type-Options", "Referrer-Policy", "Cross-Origin-Opener-Policy")


@pytest.mark.parametrize("path", ["/", "/resource_providers", "/traits/HW_CPU_X86_AVX2",
                                  "/allocation_candidates?resources=VCPU:1"])
def test_api_answers_carry_no_page_headers_and_their_length(api, path):
    response = api.get(path)
    assert response.status_code in (200, 204)
    for header in PAGE_ONLY_HEADERS:
        assert header not in response, header
    assert "Cookie" not in response.get("Vary", "")
    assert response["Content-Length"] == str(len(response.content))


@pytest.mark.parametrize("version, status", [("9.99", 406), ("pony", 400)])
def test_refusals_before_the_view_carry_their_length(api, version, status):
    response = api.get("/resource_providers", version=version)
    assert response.status_code == status
    assert response["Content-Length"] == str(len(response.content))


@pytest.mark.django_db
def test_pages_still_get_the_page_middleware():
    client = Client()
    response = client.get("/admin/login/")
    assert response.status_code == 200
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "csrftoken" in response.cookies
    assert response["X-Frame-Options"] == "DENY"


@pytest.mark.django_db
def test_page_forms_are_still_csrf_checked():
    get_user_model().objects.create_superuser("op", "op@example.com", "pw-12345")
    client = Client(enforce_csrf_checks=True)
    refused = client.post("/admin/login/", {"username": "op", "password": "pw-12345"})
    assert refused.status_code == 403
    client.get("/admin/login/")
    token = client.cookies["csrftoken"].value
    accepted = client.post("/admin/login/", {"username": "op", "password": "pw-12345",
                                             "csrfmiddlewaretoken": token})
    assert accepted.status_code == 302
    assert client.get("/ui/").status_code == 200   # the session and login carry over
