"""[placement] extensions (docs/clients/extensions.md): off, the API is exactly Placement
1.39; on, microversion 1.40 exists and the documents and pages know it."""
import pytest
from django.test import Client

from foundation import config
from placement_site import openapi
from tests.factories import make_provider

AZ1 = "a0000000-0000-0000-0000-0000000000a1"
NEW_PARAMETERS = [f"root_member_of={AZ1}", "isolate=_A,_B"]
TWO_GROUPS = "resources_A=VCPU:1&resources_B=VCPU:1"


@pytest.fixture
def extensions_on(settings):
    settings.PLACEMENT_EXTENSIONS = frozenset({"root_member_of", "isolate"})


@pytest.fixture
def host(db):
    make_provider("cn", inventory={"VCPU": 8}, aggregates=[AZ1])


# --- off (the default) --------------------------------------------------------------------


def test_off_by_default():
    assert config.load(environ={}).placement.extensions == []


def test_off_root_document_says_1_39(api):
    assert api.get("/", version=None).json()["versions"][0]["max_version"] == "1.39"


def test_off_1_40_is_not_acceptable_and_latest_is_1_39(api, host):
    response = api.get("/allocation_candidates?resources=VCPU:1", version="1.40")
    assert response.status_code == 406
    assert response.json()["errors"][0]["max_version"] == "1.39"
    latest = api.get("/allocation_candidates?resources=VCPU:1", version="latest")
    assert latest["OpenStack-API-Version"] == "placement 1.39"


@pytest.mark.parametrize("param", NEW_PARAMETERS)
def test_off_both_parameters_are_refused_as_unknown(api, host, param):
    response = api.get(f"/allocation_candidates?{TWO_GROUPS}&group_policy=none&{param}",
                       version="latest")
    assert response.status_code == 400
    detail = response.json()["errors"][0]["detail"]
    assert "Invalid query string parameters" in detail
    assert "does not match any of the regexes" in detail


def test_off_openapi_document_is_1_39():
    document = openapi.document()
    assert document["info"]["version"] == "1.39"
    names = {p["name"] for p in document["paths"]["/allocation_candidates"]["get"]["parameters"]}
    assert not names & {"root_member_of", "isolate"}


# --- on ---------------------------------------------------------------------------------------


def test_configuration_names_the_extensions(tmp_path):
    conf = config.load(environ={"PLACEMENT_EXTENSIONS": "root_member_of, isolate"})
    assert conf.placement.extensions == ["root_member_of", "isolate"]
    (tmp_path / "placement.conf").write_text("[placement]\nextensions = root_member_of\n")
    conf = config.load(environ={"OS_PLACEMENT_CONFIG_DIR": str(tmp_path)})
    assert conf.placement.extensions == ["root_member_of"]
    with pytest.raises(config.ConfigError, match="extensions"):
        config.load(environ={"PLACEMENT_EXTENSIONS": "root_member_of,teleport"})


def test_on_root_document_says_1_40(api, extensions_on):
    assert api.get("/", version=None).json()["versions"][0]["max_version"] == "1.40"


def test_on_latest_is_1_40_and_answers_as_1_39(api, host, extensions_on):
    response = api.get("/allocation_candidates?resources=VCPU:1", version="latest")
    assert response["OpenStack-API-Version"] == "placement 1.40"
    at_1_39 = api.get("/allocation_candidates?resources=VCPU:1", version="1.39")
    assert response.json() == at_1_39.json()
    assert api.get("/allocation_candidates?resources=VCPU:1",
                   version="1.41").status_code == 406


@pytest.mark.parametrize("param", NEW_PARAMETERS)
def test_on_parameters_need_1_40(api, host, extensions_on, param):
    query = f"/allocation_candidates?{TWO_GROUPS}&{param}"
    if "isolate" not in param:
        query += "&group_policy=none"
    assert api.get(query, version="1.40").status_code == 200
    assert api.get(query, version="1.39").status_code == 400


def test_on_only_the_extensions_named(api, host, settings):
    settings.PLACEMENT_EXTENSIONS = frozenset({"isolate"})
    assert api.get("/", version=None).json()["versions"][0]["max_version"] == "1.40"
    assert api.get(f"/allocation_candidates?resources=VCPU:1&root_member_of={AZ1}",
                   version="1.40").status_code == 400


def test_on_openapi_document_is_1_40(extensions_on):
    document = openapi.document()
    assert document["info"]["version"] == "1.40"
    names = {p["name"] for p in document["paths"]["/allocation_candidates"]["get"]["parameters"]}
    assert {"root_member_of", "isolate"} <= names
    response = Client().get("/openapi.json")
    assert response.json()["info"]["version"] == "1.40"
