"""foundation.jsonschemas: jsonschema.validate()'s outcome, with each schema checked
and its validator built once rather than on every request."""
import uuid

import jsonschema
import pytest

from allocations import payloads as allocation_schemas
from foundation import jsonschemas
from foundation.api import viewsets
from foundation.api.microversion import Version
from providers.api.schemas import TRAITS_QUERY_SCHEMA as LIST_QUERY_SCHEMA
from providers.api.schemas import list_query_schema
from providers.api.views import resource_providers
from tests.factories import make_provider

RP = "14a5c8a3-5a99-4e8f-88be-00d85fcb1c17"
PUT = allocation_schemas.PUT_V1_38
GOOD_PUT = {"allocations": {RP: {"resources": {"VCPU": 1}}}, "project_id": "p",
            "user_id": "u", "consumer_generation": None, "consumer_type": "TEST"}


def _raised(data, schema, format_checker):
    try:
        jsonschema.validate(data, schema, format_checker=format_checker)
    except jsonschema.ValidationError as exc:
        return exc
    return None


@pytest.mark.parametrize("data, schema, format_checker", [
    (GOOD_PUT, PUT, jsonschemas.FORMAT_CHECKER),
    ({**GOOD_PUT, "consumer_type": ""}, PUT, jsonschemas.FORMAT_CHECKER),
    ({**GOOD_PUT, "allocations": {"not-a-uuid": {"resources": {"VCPU": 1}}}}, PUT,
     jsonschemas.FORMAT_CHECKER),
    ({**GOOD_PUT, "allocations": {RP: {"resources": {"VCPU": 0}}}, "extra": 1}, PUT,
     jsonschemas.FORMAT_CHECKER),
    ({"project_id": "p"}, PUT, jsonschemas.FORMAT_CHECKER),
    ({"name": "in:HW_CPU_X86_AVX2"}, LIST_QUERY_SCHEMA, jsonschemas.FORMAT_CHECKER),
    ({"name": "x", "bogus": "1"}, LIST_QUERY_SCHEMA, jsonschemas.FORMAT_CHECKER),
    ({"uuid": RP.upper()}, list_query_schema(Version(1, 39)),
     resource_providers._QUERY_FORMATS),
    ({"uuid": "nope"}, list_query_schema(Version(1, 39)),
     resource_providers._QUERY_FORMATS),
])
def test_the_error_is_the_one_jsonschema_validate_raises(data, schema, format_checker):
    expected = _raised(data, schema, format_checker)
    found = jsonschemas.first_error(data, schema, format_checker)
    assert (found is None) == (expected is None)
    if expected is not None:
        assert str(found) == str(expected)
        assert list(found.absolute_path) == list(expected.absolute_path)


@pytest.fixture
def checks(monkeypatch):
    """The schemas checked against their metaschema, in order."""
    seen = []
    cls = jsonschema.validators.validator_for(PUT)
    original = cls.check_schema.__func__

    def counting(klass, schema, *args, **kwargs):
        seen.append(schema)
        return original(klass, schema, *args, **kwargs)

    monkeypatch.setattr(cls, "check_schema", classmethod(counting))
    monkeypatch.setattr(jsonschemas, "_validators", {})
    return seen


def test_a_schema_is_checked_once_however_often_it_validates(checks):
    for _ in range(3):
        assert jsonschemas.first_error(GOOD_PUT, PUT, jsonschemas.FORMAT_CHECKER) is None
    assert checks == [PUT]


def test_a_bad_schema_is_refused_as_jsonschema_refuses_it(checks):
    with pytest.raises(jsonschema.SchemaError):
        jsonschemas.first_error({}, {"type": "no such type"})


def test_new_schema_objects_do_not_grow_the_cache_for_ever(checks, monkeypatch):
    monkeypatch.setattr(jsonschemas, "MAX_CACHED", 8)
    for n in range(20):
        jsonschemas.first_error("x", {"type": "string", "maxLength": n})
    assert len(jsonschemas._validators) <= 8


def test_requests_validate_without_checking_their_schemas_again(api, checks):
    provider = make_provider("cn1", inventory={"VCPU": 8})
    body = {**GOOD_PUT, "allocations": {provider.uuid: {"resources": {"VCPU": 1}}}}
    for _ in range(2):
        response = api.put(f"/allocations/{uuid.uuid4()}", body)
        assert response.status_code == 204, response.content
    assert api.get("/traits?name=in:HW_CPU_X86_AVX2").status_code == 200
    assert api.get("/resource_providers?name=cn1").status_code == 200
    checked = len(checks)
    for _ in range(2):
        assert api.put(f"/allocations/{uuid.uuid4()}", body).status_code == 204
        assert api.get("/traits?name=in:HW_CPU_X86_AVX2").status_code == 200
        assert api.get("/resource_providers?name=cn1").status_code == 200
    assert len(checks) == checked
