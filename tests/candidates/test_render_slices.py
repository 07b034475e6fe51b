"""The response body is built a slice of allocation requests at a time
(present.render_json): whatever the slice size, the bytes are those of the whole
document encoded at once."""
import json

import orjson
import pytest

from candidates import present
from tests.factories import make_provider


@pytest.fixture
def cloud(db):
    for n in range(5):
        make_provider(f"cn{n}", inventory={"VCPU": 8, "MEMORY_MB": 4096},
                      traits=["HW_CPU_X86_AVX2"] if n % 2 else ())


def _body(make_api, version, query, per_slice, monkeypatch):
    monkeypatch.setattr(present, "REQUESTS_PER_SLICE", per_slice)
    response = make_api(version=version).get("/allocation_candidates?" + query)
    assert response.status_code == 200, response.content
    return response.content


@pytest.mark.parametrize("version", ["1.10", "1.17", "1.39"])   # list form, traits, all
@pytest.mark.parametrize("per_slice", [1, 2, 4, 5])
def test_any_slice_size_gives_the_same_body(cloud, make_api, monkeypatch, version, per_slice):
    query = "resources=VCPU:1,MEMORY_MB:512"
    whole = _body(make_api, version, query, 1000, monkeypatch)
    sliced = _body(make_api, version, query, per_slice, monkeypatch)
    assert sliced == whole
    document = json.loads(sliced)
    assert len(document["allocation_requests"]) == 5
    assert len(document["provider_summaries"]) == 5
    assert orjson.dumps(document) == sliced


def test_an_empty_answer(cloud, make_api, monkeypatch):
    body = _body(make_api, "1.39", "resources=VCPU:100", 2, monkeypatch)
    assert json.loads(body) == {"allocation_requests": [], "provider_summaries": {}}
