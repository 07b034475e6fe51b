"""GET /allocation_candidates parses each distinct query string once
(request.parse_query_string) and reads it exactly as request.GET does."""
import pytest

from candidates import request as candidate_request
from tests.conftest import error_detail
from tests.factories import make_provider


@pytest.fixture
def parses(monkeypatch):
    """The query strings parse_request was called for, from a cleared cache."""
    candidate_request.parse_query_string.cache_clear()
    seen = []
    original = candidate_request.parse_request

    def counting(query, version, extensions=frozenset()):
        seen.append(query.urlencode())
        return original(query, version, extensions)

    monkeypatch.setattr(candidate_request, "parse_request", counting)
    yield seen
    candidate_request.parse_query_string.cache_clear()


def test_a_repeated_query_is_parsed_once(api, db, parses):
    make_provider("cn1", inventory={"VCPU": 8})
    first = api.get("/allocation_candidates?resources=VCPU:1")
    again = api.get("/allocation_candidates?resources=VCPU:1")
    other = api.get("/allocation_candidates?resources=VCPU:2")
    assert first.status_code == again.status_code == other.status_code == 200
    assert first.json() == again.json()
    assert len(parses) == 2
    # another microversion is another parse (and another answer)
    older = api.get("/allocation_candidates?resources=VCPU:1", version="1.10")
    assert older.status_code == 200 and len(parses) == 3
    assert isinstance(older.json()["allocation_requests"][0]["allocations"], list)


def test_a_refused_query_is_refused_every_time(api, db, parses):
    for _ in range(2):
        response = api.get("/allocation_candidates?resources=VCPU:0")
        assert response.status_code == 400
    assert len(parses) == 2


@pytest.mark.parametrize("query", ["resources=VCPU:1&required=CUSTOM_CAF%C3%89",
                                   "resources=VCPU:1&required=CUSTOM_CAFÉ"])
def test_the_query_string_reads_as_django_reads_it(api, db, parses, query):
    make_provider("cn1", inventory={"VCPU": 8})
    response = api.get("/allocation_candidates?" + query)
    assert response.status_code == 400
    assert "CUSTOM_CAFÉ" in error_detail(response)
