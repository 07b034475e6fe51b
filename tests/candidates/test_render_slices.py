"""The response body is built a slice of allocation requests at a time
(present.render_json): whatever the slice size, the bytes are those of the whole
document encoded at once."""
import gc
import json
import tempfile
import weakref

import orjson
import pytest

from candidates import engine, present
from candidates.engine import Result
from candidates.request import ResponseView, parse_query_string
from foundation.api.microversion import Version
from foundation.api.renderers import FastJSONRenderer
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


# Candidates on one provider take a shorter path through present._allocation_requests.
ONE_PROVIDER_CANDIDATES = [
    # one group on it
    (((1, ((10, 2), (11, 512))),), (("", (1,)),)),
    # two groups on it
    (((1, ((10, 2), (11, 512))),), (("", (1,)), ("_B", (1,)))),
    # a resourceless group that maps another provider
    (((2, ((10, 2),)),), (("_NET", (3,)), ("", (2,)))),
    # two providers, for contrast
    (((1, ((10, 1),)), (2, ((11, 256),))), (("", (1, 2)),)),
]


@pytest.mark.parametrize("mappings", [True, False])
def test_candidates_on_one_provider_render_as_any_other(mappings):
    result = present_result(ONE_PROVIDER_CANDIDATES)
    view = ResponseView(mappings=mappings)
    rendered = present.render(result, view)["allocation_requests"]
    expected = [
        {"allocations": {"u1": {"resources": {"VCPU": 2, "MEMORY_MB": 512}}},
         "mappings": {"": ["u1"]}},
        {"allocations": {"u1": {"resources": {"VCPU": 2, "MEMORY_MB": 512}}},
         "mappings": {"": ["u1"], "_B": ["u1"]}},
        {"allocations": {"u2": {"resources": {"VCPU": 2}}},
         "mappings": {"_NET": ["u3"], "": ["u2"]}},
        {"allocations": {"u1": {"resources": {"VCPU": 1}},
                         "u2": {"resources": {"MEMORY_MB": 256}}},
         "mappings": {"": ["u1", "u2"]}},
    ]
    if not mappings:
        for entry in expected:
            del entry["mappings"]
    assert rendered == expected
    assert [list(entry) for entry in rendered] == [list(entry) for entry in expected]


def test_candidates_on_one_provider_in_list_form():
    result = present_result(ONE_PROVIDER_CANDIDATES[:1])
    view = ResponseView(dict_allocations=False, mappings=False)
    assert present.render(result, view)["allocation_requests"] == [
        {"allocations": [{"resource_provider": {"uuid": "u1"},
                          "resources": {"VCPU": 2, "MEMORY_MB": 512}}]}]


def present_result(candidates):
    return Result(candidates=candidates, uuids={1: "u1", 2: "u2", 3: "u3"},
                  class_names={10: "VCPU", 11: "MEMORY_MB"})


@pytest.mark.parametrize("version", ["1.10", "1.39"])   # list form, dict form
def test_a_rendered_answer_is_freed_by_reference_counting(cloud, version):
    # Nothing rendering builds may hold the answer in a reference cycle: the view drops
    # it while the cyclic collector is paused, and a cycle would keep every candidate
    # alive until the next collection, which then walks them all (0.5 ms a request at
    # 1,000 candidates, with the engine compiled).
    parsed = parse_query_string("resources=VCPU:1,MEMORY_MB:512", Version.parse(version))
    gc.collect()
    gc.disable()
    try:
        view = parsed.view
        result = engine.find_candidates(parsed.query, whole_trees=view.tree_summaries,
                                        all_classes=view.all_classes, with_traits=view.traits)
        assert len(result.candidates) == 5
        answer = weakref.ref(result)
        present.render_json(result, view, FastJSONRenderer().render)
        del result
        assert answer() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("version", ["1.10", "1.39"])
def test_a_very_large_body_is_sent_from_a_file_with_its_length(cloud, make_api,
                                                                     monkeypatch, version):
    query = "resources=VCPU:1,MEMORY_MB:512"
    whole = _body(make_api, version, query, 2, monkeypatch)
    monkeypatch.setattr(present, "WHOLE_BODY_BYTES", 100)   # this answer is "very large"
    spooled = []   # the body is written to a temporary file once, and sent from it
    temporary_file = tempfile.TemporaryFile
    monkeypatch.setattr(tempfile, "TemporaryFile",
                        lambda: spooled.append(temporary_file()) or spooled[-1])
    response = make_api(version=version).get("/allocation_candidates?" + query)
    assert response.status_code == 200
    assert response.streaming
    body = response.getvalue()
    assert body == whole
    assert response["Content-Length"] == str(len(whole))
    assert response["Content-Type"] == "application/json"
    assert "Content-Disposition" not in response
    response.close()
    assert len(spooled) == 1 and spooled[0].closed
