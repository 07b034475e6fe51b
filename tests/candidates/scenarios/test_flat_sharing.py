"""§7.1 Flat hosts and a sharing provider."""
import pytest

from tests.candidates.helpers import get_candidates, summary_names
from tests.factories import make_provider

AGG_A = "a0000000-0000-0000-0000-00000000000a"
HOST = {"VCPU": 8, "MEMORY_MB": 1024, "DISK_GB": 1000}


@pytest.fixture
def flat(db):
    make_provider("SS1", inventory={"DISK_GB": 1000}, aggregates=[AGG_A],
                  traits=["MISC_SHARES_VIA_AGGREGATE"])
    make_provider("SS2", inventory={"DISK_GB": 1000}, traits=["MISC_SHARES_VIA_AGGREGATE"])
    make_provider("CN1", inventory=HOST, aggregates=[AGG_A])
    make_provider("CN2", inventory=HOST)


EXPECTED = [
    "CN1(DISK_GB:500,MEMORY_MB:512,VCPU:1)",
    "CN1(MEMORY_MB:512,VCPU:1)+SS1(DISK_GB:500)",
    "CN2(DISK_GB:500,MEMORY_MB:512,VCPU:1)",
]


@pytest.mark.parametrize("version", ["1.10", "1.28", "1.36"])
def test_three_candidates_at_every_version(api, flat, version):
    response = api.get("/allocation_candidates?resources=VCPU:1,MEMORY_MB:512,DISK_GB:500",
                       version=version)
    assert response.status_code == 200
    from tests.candidates.helpers import describe
    assert describe(response.json()) == EXPECTED
    assert summary_names(response.json()) == ["CN1", "CN2", "SS1"]


def test_mappings(api, flat):
    got = get_candidates(api, "resources=VCPU:1,MEMORY_MB:512,DISK_GB:500", mappings=True,
                         version="1.34")
    assert "CN1(MEMORY_MB:512,VCPU:1)+SS1(DISK_GB:500) maps :[CN1,SS1]" in got


def test_disk_only_each_provider_alone(api, flat):
    assert get_candidates(api, "resources=DISK_GB:500") == [
        "CN1(DISK_GB:500)", "CN2(DISK_GB:500)", "SS1(DISK_GB:500)", "SS2(DISK_GB:500)"]
