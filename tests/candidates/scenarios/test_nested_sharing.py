"""§7.2 Nested hosts, a sharing provider and aggregates."""
import pytest

from tests.candidates.helpers import get_candidates, summary_names
from tests.factories import make_provider

A = "a0000000-0000-0000-0000-00000000000a"
B = "b0000000-0000-0000-0000-00000000000b"
R = "resources=VCPU:1,MEMORY_MB:512,DISK_GB:500"


@pytest.fixture
def nested(db):
    make_provider("SS1", inventory={"DISK_GB": 1000}, aggregates=[A],
                  traits=["MISC_SHARES_VIA_AGGREGATE"])
    cn1 = make_provider("CN1", inventory={"MEMORY_MB": 1024, "DISK_GB": 1000},
                        aggregates=[A, B])
    make_provider("NUMA1_1", parent=cn1, inventory={"VCPU": 8})
    make_provider("NUMA1_2", parent=cn1, inventory={"VCPU": 8})
    cn2 = make_provider("CN2", inventory={"MEMORY_MB": 1024, "DISK_GB": 1000}, aggregates=[A])
    make_provider("NUMA2_1", parent=cn2, inventory={"VCPU": 8}, aggregates=[B])
    make_provider("NUMA2_2", parent=cn2, inventory={"VCPU": 8})


def eight():
    out = []
    for cn, numas in (("CN1", ("NUMA1_1", "NUMA1_2")), ("CN2", ("NUMA2_1", "NUMA2_2"))):
        for numa in numas:
            out.append(f"{cn}(DISK_GB:500,MEMORY_MB:512)+{numa}(VCPU:1)")
            out.append(f"{cn}(MEMORY_MB:512)+{numa}(VCPU:1)+SS1(DISK_GB:500)")
    return sorted(out)


def test_eight_candidates_and_all_summaries(api, nested):
    response = api.get("/allocation_candidates?" + R)
    from tests.candidates.helpers import describe
    assert describe(response.json()) == eight()
    assert summary_names(response.json()) == sorted(
        ["SS1", "CN1", "NUMA1_1", "NUMA1_2", "CN2", "NUMA2_1", "NUMA2_2"])


def test_member_of_root_aggregate_spans_tree(api, nested):
    assert get_candidates(api, f"{R}&member_of={A}") == eight()


def test_member_of_non_root_aggregate_does_not_span(api, nested):
    assert get_candidates(api, f"{R}&member_of={B}") == [
        "CN1(DISK_GB:500,MEMORY_MB:512)+NUMA1_1(VCPU:1)",
        "CN1(DISK_GB:500,MEMORY_MB:512)+NUMA1_2(VCPU:1)",
    ]


def test_forbidden_aggregate(api, nested):
    assert get_candidates(api, f"{R}&member_of=!{B}") == [
        "CN2(DISK_GB:500,MEMORY_MB:512)+NUMA2_2(VCPU:1)",
        "CN2(MEMORY_MB:512)+NUMA2_2(VCPU:1)+SS1(DISK_GB:500)",
    ]


def test_granular_member_of_looks_at_provider_only(api, nested):
    assert get_candidates(api, f"resources1=VCPU:1&member_of1={B}") == ["NUMA2_1(VCPU:1)"]


def test_not_nested_aware_below_1_29(api, nested):
    assert get_candidates(api, R, version="1.28") == []
