"""python -m bench devices loads PCI, vGPU and SR-IOV clouds and times their queries.

Smoke tests only, at tiny sizes: speed targets live in the benchmark's figures."""
import pytest

from bench import BenchError
from bench import devices
from bench.devices import Case, SRIOV_QUERY, VGPU_QUERY, pci_query
from providers.models import ResourceProvider
from tests.factories import make_provider


def _rows(output):
    """{case: candidates} from the printed table."""
    names = {case.name for case in devices.CASES}
    return {line.split()[0]: int(line.split()[1]) for line in output.splitlines()
            if line.split() and line.split()[0] in names}


@pytest.fixture(autouse=True)
def settled_at_once(settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0


@pytest.mark.django_db
def test_each_shape_at_a_tiny_size(bench, monkeypatch):
    monkeypatch.setattr(devices, "CASES", [
        Case("pci-2x3-none", ("pci", 2, 3), pci_query(3, "none"), None),
        Case("pci-2x3-isolate", ("pci", 2, 3), pci_query(3, "isolate"), 4),
        Case("pci-2x3-traits", ("pci", 2, 3), pci_query(2, "none", traits=True), None),
        Case("pci-2x3-4groups", ("pci", 2, 3), pci_query(4, "none"), 1000),
        Case("vgpu-2x4", ("vgpu", 2, None), VGPU_QUERY, 300),
        Case("sriov-1", ("sriov", 1, None), SRIOV_QUERY, None),
    ])
    output = bench("devices", "--wipe", "--reps", 1, "--memory")
    assert _rows(output) == {
        "pci-2x3-none": 12,      # 3! arrangements per host
        "pci-2x3-isolate": 4,
        "pci-2x3-traits": 4,     # G1 on the one odd device, G2 on either even one
        "pci-2x3-4groups": 0,
        "vgpu-2x4": 300,         # 4 ** 4 per host
        "sriov-1": 24,           # per NUMA node: 4 PFs, two distinct in order
    }
    memory = [line for line in output.splitlines() if line.startswith("memory ")]
    assert [line.split()[1] for line in memory] == [
        "pci-2x3-none:", "pci-2x3-traits:", "sriov-1:"]
    assert output.splitlines()[-1].startswith("engine: ")


def test_the_cases_and_wipe_are_checked_before_anything_runs(bench):
    with pytest.raises(BenchError, match="--wipe"):
        bench("devices", "--case", "vgpu-10x4")
    with pytest.raises(BenchError, match="no case 'nope'"):
        bench("devices", "--wipe", "--case", "nope")


TINY = [
    Case("pci-2x3-none", ("pci", 2, 3), pci_query(3, "none"), None),
    Case("pci-2x3-isolate", ("pci", 2, 3), pci_query(3, "isolate"), 4),
    Case("pci-2x3-4groups", ("pci", 2, 3), pci_query(4, "none"), 1000),
    Case("sriov-1", ("sriov", 1, None), SRIOV_QUERY, None),
]


@pytest.mark.django_db(transaction=True)
def test_served_by_a_live_server_loaded_through_its_api(bench, live_server, monkeypatch):
    """--url: the clouds are written through the HTTP API (after what the server held is
    deleted the same way) and the queries timed over HTTP; --vs asks a second server
    request for request (here the same one, loaded once)."""
    monkeypatch.setattr(devices, "CASES", TINY)
    make_provider("left over", inventory={"VCPU": 1})
    output = bench("devices", "--wipe", "--reps", 2, "--url", live_server.url)
    assert _rows(output) == {"pci-2x3-none": 12, "pci-2x3-isolate": 4,
                             "pci-2x3-4groups": 0, "sriov-1": 24}
    assert "served by " + live_server.url in output.splitlines()[0]
    # written through the API: the providers the last cloud planned, and nothing else
    assert ResourceProvider.objects.count() == 1 + 2 + 8
    assert not ResourceProvider.objects.filter(name="left over").exists()
    output = bench("devices", "--wipe", "--reps", 2, "--case", "pci-2x3-none",
                   "--url", live_server.url, "--vs", live_server.url)
    [row] = [line.split() for line in output.splitlines() if line.startswith("pci-")]
    assert row[1] == "12" and float(row[-1]) > 0   # the ratio of the paired requests
    assert ResourceProvider.objects.filter(parent=None).count() == 2


def test_served_options_are_checked(bench):
    with pytest.raises(BenchError, match="--url"):
        bench("devices", "--wipe", "--vs", "http://127.0.0.1:1")
    with pytest.raises(BenchError, match="--memory measures this process"):
        bench("devices", "--wipe", "--memory", "--url", "http://127.0.0.1:1")
