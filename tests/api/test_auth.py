"""noauth2 identities (http.md §12.1) as the policy sees them."""
import pytest

UNAUTHORIZED_START = "This server could not verify that you are authorized"


@pytest.mark.parametrize("method, path", [
    ("GET", "/resource_providers"), ("POST", "/resource_providers"),
    ("GET", "/nowhere"), ("PATCH", "/traits"), ("OPTIONS", "/traits"),
    ("GET", "/resource_providers/"),
])
def test_every_path_but_the_root_needs_a_token(api, method, path):
    response = api.request(method, path, token="")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["title"] == "Unauthorized" and body["code"] == "401 Unauthorized"
    assert body["message"].startswith(UNAUTHORIZED_START)
    assert "errors" not in body
    assert "OpenStack-API-Version" not in response


def test_roles_header_replaces_the_admin_default(api):
    """X-Roles, when present, is the whole role list, even for the user `admin`."""
    assert api.get("/traits").status_code == 200
    assert api.get("/traits", headers={"X-Roles": "reader"}).status_code == 403
    assert api.get("/traits", headers={"X-Roles": ""}).status_code == 403
    assert api.get("/traits", token="admin:p", headers={"X-Roles": "reader,admin"}).status_code == 200


def test_only_the_user_admin_is_an_administrator_by_default(make_api):
    for token in ("Admin", "administrator", "user:admin", "admins"):
        assert make_api(token=token).get("/traits").status_code == 403, token


def test_project_comes_from_the_token_or_its_user(make_api):
    """The reader's project is `p1` from `u:p1`, the user id from a bare token, and an
    explicit X-Project-Id wins over both."""
    reader = {"X-Roles": "reader"}
    assert make_api(token="u:p1").get("/usages?project_id=p1", headers=reader).status_code == 200
    assert make_api(token="u:p1").get("/usages?project_id=u", headers=reader).status_code == 403
    assert make_api(token="u").get("/usages?project_id=u", headers=reader).status_code == 200
    assert make_api(token="u:a:b").get("/usages?project_id=a:b",
                                       headers=reader).status_code == 200
    overridden = dict(reader, **{"X-Project-Id": "p2"})
    assert make_api(token="u:p1").get("/usages?project_id=p2",
                                      headers=overridden).status_code == 200
    assert make_api(token="u:p1").get("/usages?project_id=p1",
                                      headers=overridden).status_code == 403
