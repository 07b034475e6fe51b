"""Every scenario runs twice: with the whole-database batch looking the providers it
needs up by id (what small databases do) and reading the whole provider table (what
large ones do), so both paths give the exact expected candidates and summaries."""
import pytest

from candidates import engine


@pytest.fixture(autouse=True, params=["by-id", "whole-table"])
def provider_lookup(request, monkeypatch):
    if request.param == "whole-table":
        monkeypatch.setattr(engine, "LOOKUP_BY_ID_UP_TO", -1)
    return request.param
