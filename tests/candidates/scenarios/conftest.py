"""Every scenario runs three times: with the whole-database batch looking the providers it
needs up by id (what small databases do), reading the whole provider table (what large
ones do), and with the topology answered from a snapshot (candidates/sql/topology.py,
what a settled cloud does; here read anew for each request, inside the test's
transaction), so every path gives the exact expected candidates and summaries."""
import pytest

from candidates.engine import facts as engine_facts
from candidates.sql import topology


@pytest.fixture(autouse=True, params=["by-id", "whole-table", "snapshot"])
def provider_lookup(request, monkeypatch):
    if request.param == "whole-table":
        monkeypatch.setattr(engine_facts, "LOOKUP_BY_ID_UP_TO", -1)
    if request.param == "snapshot":
        monkeypatch.setattr(topology, "_current_snapshot", topology.Snapshot.load)
    return request.param
