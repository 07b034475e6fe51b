"""Time the candidates explorer and the "why not?" pages on 1,000 providers.

    .venv/bin/python scripts/time_candidates_ui.py [--reps 15] [--keep]

Builds a fresh SQLite database in a temporary directory (never the configured one):
190 compute trees (root with MEMORY_MB/DISK_GB, two NUMA nodes with VCPU, two PFs with
SRIOV_NET_VF; traits and an aggregate on some), 10 sharing disks in that aggregate and
40 flat hosts, 1,000 providers, with 300 consumers' allocations, through
tests/factories.py. Then requests each page through Django's test client, logged in as
staff (middleware, view, engine/explainer, template), and prints the median and best
wall time, the median CPU time of this process and the number of SQL queries.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAGES = [
    ("candidates, no limit (page 1)", "ui:candidates",
     {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39"}),
    ("candidates, no limit (page 5)", "ui:candidates",
     {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39", "page": "5"}),
    ("candidates, granular + sharing", "ui:candidates",
     {"q": "resources=MEMORY_MB:512,DISK_GB:50&resources_NET=SRIOV_NET_VF:1"
           "&required_NET=CUSTOM_PHYSNET1&resources_CPU=VCPU:2&group_policy=isolate",
      "version": "1.39"}),
    ("why-not, empty answer", "ui:why-not",
     {"q": "resources=VCPU:40,MEMORY_MB:512", "version": "1.39"}),
    ("why-not, traits + aggregate", "ui:why-not",
     {"q": "resources=VCPU:1,MEMORY_MB:512,DISK_GB:100&required=HW_CPU_X86_AVX2"
           "&member_of=a0000000-0000-0000-0000-00000000000a", "version": "1.39"}),
    ("why-not, isolate + same_subtree", "ui:why-not",
     {"q": "resources_A=SRIOV_NET_VF:4&resources_B=SRIOV_NET_VF:4&required_N=HW_NUMA_ROOT"
           "&group_policy=isolate&same_subtree=_A,_B,_N", "version": "1.39", "page": "3"}),
    ("why-not.json, empty answer", "ui:why-not-json",
     {"q": "resources=VCPU:40,MEMORY_MB:512", "version": "1.39"}),
]


def build():
    from tests.factories import allocate, make_consumer, make_provider

    agg = "a0000000-0000-0000-0000-00000000000a"
    numas = []
    for index in range(190):
        root = make_provider(
            f"cn{index:03}", inventory={"MEMORY_MB": 65536, "DISK_GB": 1000},
            traits=["COMPUTE_VOLUME_MULTI_ATTACH"] if index % 2 else [],
            aggregates=[agg] if index % 3 else [])
        for numa in range(2):
            numas.append(make_provider(
                f"cn{index:03}-numa{numa}", parent=root, inventory={"VCPU": 32},
                traits=["HW_NUMA_ROOT"] + (["HW_CPU_X86_AVX2"] if index % 4 == 0 else [])))
        for pf in range(2):
            make_provider(f"cn{index:03}-pf{pf}", parent=root,
                          inventory={"SRIOV_NET_VF": 8}, traits=[f"CUSTOM_PHYSNET{pf + 1}"])
    for index in range(10):
        make_provider(f"shared-disk{index}", inventory={"DISK_GB": 10000},
                      traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[agg])
    for index in range(40):
        make_provider(f"flat{index:02}", inventory={"VCPU": 16, "MEMORY_MB": 32768,
                                                    "DISK_GB": 500})
    for index in range(300):
        allocate(make_consumer(), numas[index % len(numas)], VCPU=1 + index % 8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="keep the temporary database")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="time-candidates-ui-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/placement.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")

    import django
    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from providers.models import ResourceProvider

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    build()
    print(f"{ResourceProvider.objects.count()} providers built in "
          f"{time.perf_counter() - started:.1f}s ({workdir})")
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("timer", "t@x.invalid", "pw"))

    print(f"{'page':34} {'status':>6} {'median':>8} {'best':>8} {'cpu':>8} {'queries':>8} "
          f"{'KB':>6}  (ms, {args.reps} reps)")
    for label, name, params in PAGES:
        url = reverse(name)
        response = client.get(url, params)   # warm-up
        with CaptureQueriesContext(connection) as queries:
            client.get(url, params)
        count = len(queries)   # read now: the next request empties the log
        walls, cpus = [], []
        for _ in range(args.reps):
            wall, cpu = time.perf_counter(), time.process_time()
            response = client.get(url, params)
            cpus.append((time.process_time() - cpu) * 1000)
            walls.append((time.perf_counter() - wall) * 1000)
        print(f"{label:34} {response.status_code:>6} {statistics.median(walls):8.1f} "
              f"{min(walls):8.1f} {statistics.median(cpus):8.1f} {count:>8} "
              f"{len(response.content) / 1024:6.0f}")
    if not args.keep:
        for path in Path(workdir).iterdir():
            path.unlink()
        os.rmdir(workdir)


if __name__ == "__main__":
    main()
