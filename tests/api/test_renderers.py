"""The API's JSON renderer: same documents as DRF's, faster."""
import json
from decimal import Decimal

from rest_framework.renderers import JSONRenderer

from foundation.api.renderers import FastJSONRenderer


def test_same_document_as_drf():
    data = {"resource_providers": [{"name": "nöde ☃", "generation": 3,
                                    "allocation_ratio": 16.0, "parent": None,
                                    "links": [{"rel": "self", "href": "/x"}]}]}
    fast = FastJSONRenderer().render(data)
    assert json.loads(fast) == json.loads(JSONRenderer().render(data)) == data
    assert b" " not in fast.replace("nöde ☃".encode(), b"")   # compact, like DRF's


def test_falls_back_to_drf_for_what_orjson_cannot_encode():
    data = {"big": 2 ** 70, "ratio": Decimal("1.5")}
    assert FastJSONRenderer().render(data) == JSONRenderer().render(data)


def test_empty_body():
    assert FastJSONRenderer().render(None) == b""


def test_api_responses_use_it(api):
    # DRF's renderer escapes U+2028 as \\u2028; orjson writes the character itself
    response = api.post("/resource_providers", {"name": "line\u2028separator"})
    assert response.status_code == 200
    assert "line\u2028separator".encode() in response.content
    assert response.json()["name"] == "line\u2028separator"
