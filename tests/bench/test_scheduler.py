"""python -m bench scheduler: nova-like schedulers place instances on a live server.

Smoke tests only, at tiny sizes: speed targets live in the benchmark's figures."""
import pytest
from django.db import connection

from allocations.models import Allocation, Consumer
from bench import BenchError
from providers.models import ResourceProvider


@pytest.fixture(autouse=True)
def settled_at_once(settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0


def _schedulers(wanted):
    """Schedulers at once: the live server's threads share one connection to an
    in-memory SQLite database, which cannot serve two requests at a time; PostgreSQL and
    MariaDB runs of the suite race them."""
    return 1 if connection.vendor == "sqlite" else wanted


def _rows(output):
    """The round rows: [{placed/s, p50, p99, placed, failed, retries, no host, check}]."""
    rows = []
    for line in output.splitlines():
        parts = line.split(None, 9)
        if len(parts) == 10 and parts[1].isdigit():
            rows.append({"placed": int(parts[5]), "failed": int(parts[6]),
                         "retries": int(parts[7]), "no_host": int(parts[8]),
                         "check": parts[9], "rate": float(parts[2])})
    return rows


@pytest.mark.django_db(transaction=True)
def test_flat_storm_places_every_instance_and_cleans_up(bench, live_server):
    """Three schedulers place 20 instances on four hosts (32 fit on each) all trying the
    same best host first (host_subset_size 1): every one is placed, none over capacity,
    and the instances are deleted after the round."""
    output = bench("scheduler", "--url", live_server.url, "--wipe", "--shape", "flat",
                   "--hosts", 4, "--schedulers", _schedulers(3), "--instances", 20,
                   "--seed", 1)
    [row] = _rows(output)
    assert row["placed"] == 20 and row["no_host"] == 0
    assert row["check"].startswith("OK (")
    assert row["rate"] > 0
    assert ResourceProvider.objects.count() == 4
    assert not Allocation.objects.exists() and not Consumer.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_nested_storm_fills_the_cloud_exactly(bench, live_server):
    """Two trees fit two instances each (one per FPGA under numa1): of six asked, four
    are placed, two find no valid host, the cloud is full and not over it; with --keep
    the instances stay, each on its own FPGA."""
    output = bench("scheduler", "--url", live_server.url, "--wipe", "--shape", "nested",
                   "--hosts", 2, "--schedulers", _schedulers(2), "--instances", 6,
                   "--host-subset-size", 2, "--keep")
    [row] = _rows(output)
    assert (row["placed"], row["no_host"]) == (4, 2)
    assert row["check"] == "OK (8 providers)"   # 2 roots, 2 numa1 nodes, 4 FPGAs
    fpga = Allocation.objects.filter(resource_class__name="FPGA")
    assert fpga.count() == 4 and fpga.values("provider").distinct().count() == 4


@pytest.mark.django_db(transaction=True)
def test_vs_alternates_rounds_and_gives_a_ratio(bench, live_server):
    output = bench("scheduler", "--url", live_server.url, "--vs", live_server.url,
                   "--wipe", "--hosts", 2, "--schedulers", _schedulers(2), "--instances", 4,
                   "--rounds", 2)
    assert len(_rows(output)) == 4
    assert "ratio (url / vs)" in output.splitlines()[-1]


def test_options_are_checked(bench):
    with pytest.raises(BenchError, match="--schedulers must be at least 1"):
        bench("scheduler", "--url", "http://127.0.0.1:1", "--schedulers", 0)
