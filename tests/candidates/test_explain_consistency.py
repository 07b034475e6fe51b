"""The explainer cannot disagree with the answer: for many queries, the trees it says
fit are exactly the roots of the providers in the engine's real answer, whatever the
page size (trees of one page sharing providers with trees of another included)."""
import pytest
from django.http import QueryDict

from candidates import engine
from candidates import explain as explainer
from candidates.request import parse_request
from foundation.api.microversion import Version
from providers.models import ResourceProvider
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db

AGG_A = "a0000000-0000-0000-0000-00000000000a"
AGG_B = "b0000000-0000-0000-0000-00000000000b"
SHARES = "MISC_SHARES_VIA_AGGREGATE"


@pytest.fixture
def cloud():
    """Sharing disks, flat and nested hosts, NIC trees, traits and aggregates at every
    level, an exhausted host and an empty root (uuids of a few for in_tree)."""
    make_provider("ss1", inventory={"DISK_GB": 1000}, traits=[SHARES], aggregates=[AGG_A])
    make_provider("ss2", inventory={"DISK_GB": 1000}, traits=[SHARES])
    cn1 = make_provider("cn1", inventory={"MEMORY_MB": 1024, "DISK_GB": 1000},
                        traits=["COMPUTE_VOLUME_MULTI_ATTACH"], aggregates=[AGG_A, AGG_B])
    make_provider("cn1-numa0", parent=cn1, inventory={"VCPU": 8}, traits=["HW_NUMA_ROOT"])
    make_provider("cn1-numa1", parent=cn1, inventory={"VCPU": 8},
                  traits=["HW_NUMA_ROOT", "HW_CPU_X86_AVX2"])
    cn2 = make_provider("cn2", inventory={"MEMORY_MB": 1024, "DISK_GB": 1000},
                        aggregates=[AGG_A])
    make_provider("cn2-numa0", parent=cn2, inventory={"VCPU": 8}, aggregates=[AGG_B])
    make_provider("cn2-numa1", parent=cn2, inventory={"VCPU": {"total": 8, "step_size": 2}})
    flat = make_provider("flat", inventory={"VCPU": 16, "MEMORY_MB": 4096, "DISK_GB": 100},
                         traits=["HW_CPU_X86_AVX2", "CUSTOM_WINDOWS"])
    host = make_provider("nichost", inventory={"VCPU": 4, "MEMORY_MB": 2048},
                         traits=["COMPUTE_VOLUME_MULTI_ATTACH"])
    nic1 = make_provider("nic1", parent=host, traits=["CUSTOM_HW_NIC_ROOT"])
    nic2 = make_provider("nic2", parent=host, traits=["CUSTOM_HW_NIC_ROOT"])
    make_provider("pf1_1", parent=nic1, inventory={"SRIOV_NET_VF": 4}, traits=["CUSTOM_NET1"])
    make_provider("pf1_2", parent=nic1, inventory={"SRIOV_NET_VF": 4}, traits=["CUSTOM_NET2"])
    make_provider("pf2_1", parent=nic2, inventory={"SRIOV_NET_VF": 1}, traits=["CUSTOM_NET1"])
    full = make_provider("full", inventory={"VCPU": 4, "MEMORY_MB": 512}, aggregates=[AGG_A])
    allocate(make_consumer(), full, VCPU=4, MEMORY_MB=256)
    make_provider("empty")
    return {"cn1": cn1.uuid, "nichost": host.uuid, "flat": flat.uuid}


QUERIES = [
    ("1.39", "resources=VCPU:1,MEMORY_MB:512,DISK_GB:500"),
    ("1.39", "resources=DISK_GB:500"),
    ("1.39", "resources=DISK_GB:10,VCPU:1"),
    ("1.39", "resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&member_of=" + AGG_B),
    ("1.39", "resources=VCPU:1,MEMORY_MB:512,DISK_GB:500&member_of=!" + AGG_B),
    ("1.39", "resources1=VCPU:1&member_of1=" + AGG_B),
    ("1.39", "resources=VCPU:3"),
    ("1.39", "resources=VCPU:1&required=HW_CPU_X86_AVX2,!CUSTOM_WINDOWS"),
    ("1.39", "resources=VCPU:1&required=in:HW_NUMA_ROOT,CUSTOM_WINDOWS"),
    ("1.39", "resources=VCPU:1&resources1=MEMORY_MB:256&resources2=DISK_GB:10"
             "&group_policy=isolate"),
    ("1.39", "resources1=VCPU:1&resources2=MEMORY_MB:256&group_policy=isolate"),
    ("1.39", "resources1=VCPU:1&resources2=MEMORY_MB:256&group_policy=none"),
    ("1.39", "resources=VCPU:2&resources1=VCPU:2&resources2=VCPU:2&group_policy=none"),
    ("1.39", "resources_A=SRIOV_NET_VF:1&required_A=CUSTOM_NET1&resources_B=SRIOV_NET_VF:1"
             "&required_B=CUSTOM_NET2&required_N=CUSTOM_HW_NIC_ROOT&group_policy=none"
             "&same_subtree=_A,_B,_N"),
    ("1.39", "resources_A=SRIOV_NET_VF:1&resources_B=SRIOV_NET_VF:1"
             "&group_policy=isolate&same_subtree=_A,_B"),
    ("1.39", "resources=VCPU:1&root_required=COMPUTE_VOLUME_MULTI_ATTACH"),
    ("1.39", "resources=DISK_GB:10&root_required=!" + SHARES),
    ("1.39", "resources=DISK_GB:10&root_required=" + SHARES),
    ("1.39", "resources=VCPU:1,DISK_GB:50&in_tree={cn1}"),
    ("1.39", "resources=VCPU:1&resources1=DISK_GB:10&in_tree1={cn1}"),
    ("1.39", "resources=VCPU:1&in_tree={nichost}&resources1=DISK_GB:10"),
    ("1.39", "resources1=SRIOV_NET_VF:1&required2=CUSTOM_HW_NIC_ROOT&group_policy=none"
             "&same_subtree=1,2"),
    ("1.39", "resources=VCPU:9999"),
    ("1.28", "resources=VCPU:1,MEMORY_MB:512"),
    ("1.28", "resources=VCPU:1,DISK_GB:10"),
    ("1.10", "resources=MEMORY_MB:256"),
]


def fitting_roots_of_the_answer(query):
    """Root uuids of every provider the engine's answer allocates from or maps to."""
    result = engine.find_candidates(query)
    used = set()
    for allocations, mappings in result.candidates:
        used.update(rp for rp, _ in allocations)
        for _, rps in mappings:
            used.update(rps)
    roots = ResourceProvider.objects.filter(id__in=used).values_list("root__uuid", flat=True)
    return set(roots)


def fitting_trees_of_the_explanation(query, per_page):
    fits, page, pages = set(), 1, 1
    while page <= pages:
        explained = explainer.explain(query, page=page, per_page=per_page)
        pages = explained["page"]["pages"]
        for tree in explained["trees"]:
            if tree["fits"]:
                fits.add(tree["root"]["uuid"])
                assert tree["candidates"] or tree["shared_with"], tree
            else:
                # an excluded tree always says why
                assert tree["reasons"] or any(p["reasons"] for p in tree["providers"]), tree
        page += 1
    return fits


@pytest.mark.parametrize("version, query_string", QUERIES)
def test_the_trees_said_to_fit_are_the_roots_of_the_answer(cloud, version, query_string):
    parsed = parse_request(QueryDict(query_string.format(**cloud)), Version.parse(version))
    expected = fitting_roots_of_the_answer(parsed.query)
    for per_page in (100, 3, 1):
        assert fitting_trees_of_the_explanation(parsed.query, per_page) == expected, per_page


def test_the_queries_cover_answers_empty_partial_and_with_sharing(cloud):
    sizes = []
    for version, query_string in QUERIES:
        parsed = parse_request(QueryDict(query_string.format(**cloud)), Version.parse(version))
        sizes.append(len(fitting_roots_of_the_answer(parsed.query)))
    assert 0 in sizes and max(sizes) >= 4 and any(0 < size < 4 for size in sizes)
