"""Time GET /allocation_candidates on wide, symmetric device trees (issue 42).

Usage::

    python -m bench devices --wipe [--case NAME ...] [--reps 5] [--memory]
        [--url http://127.0.0.1:8000 [--vs http://127.0.0.1:8001]]

Each case loads its cloud (bench/cloud.py: `pci`, `vgpu`, `sriov`) into the configured
database, after deleting every allocation, consumer and provider (``--wipe`` is
required: never point it at a database you care about), then times its queries
in-process as ``bench candidates`` does: the first request, then median / min wall ms
and median CPU ms (this process's; with SQLite the database's too) of ``--reps``
requests, and the number of candidates. Cases sharing a cloud load it once.

* PCI (nova's PCI-in-Placement): hosts × devices, one provider of capacity 1 per
  device, asked as one granular group per device beside the unsuffixed VCPU and
  MEMORY_MB, with ``group_policy=none`` or ``isolate``, and with a required trait per
  group (``traits``: half the devices have each of two traits);
* vGPU: hosts with 4 physical GPUs of VGPU 16, 4 groups of VGPU:1;
* SR-IOV: hosts -> 2 NUMA nodes -> 4 PFs each; CPU on a NUMA node and two VFs on
  distinct PFs of that NUMA node (``same_subtree`` and ``isolate``).

``--url URL``: time the same queries against a live server over HTTP instead (served:
the server's parsing, engine, JSON and the bytes on the wire), its cloud written through
the HTTP API (cloud.build_over_api, after cloud.wipe_over_api empties it: ``--wipe`` is
still required), so that Placement 16.0.0 can be loaded and timed alike. ``--vs URL2``:
a second live server (on a database of its own), loaded the same way and asked request
for request as ``bench candidates --vs`` does; a row then gives both medians and the
median of the repetitions' ratios (URL2 / URL). ``--timeout`` bounds one request
(Placement takes minutes on some cases): a case past it prints the error and the run
goes on. No CPU column: the time is the server's.

``--memory``: for each no-limit case, the resident memory around one answer served
through Django's WSGI handler (as in ``bench candidates --memory``): its peak growth,
the process's peak (VmHWM) then, and what is still held after it.
"""
import statistics
import time
from collections import namedtuple

from bench import BenchError, cloud
from bench.candidates import (_engine, _in_process, _live, _memory_growth, _mb, _rss_kb,
                              _same_answer, _settle_topology)
from bench.candidates import _timed as _paired
from django.db import connection

HELP = "time GET /allocation_candidates on PCI, vGPU and SR-IOV device trees"

Case = namedtuple("Case", "name cloud query limit")
COMPUTE = "resources=VCPU:4,MEMORY_MB:4096"


def pci_query(groups, policy, traits=False):
    """One granular group of one PCI device each (nova's PCI in Placement)."""
    parts = [COMPUTE]
    for i in range(1, groups + 1):
        parts.append(f"resources_G{i}={cloud.PCI_CLASS}:1")
        if traits:
            parts.append(f"required_G{i}={cloud.PCI_TRAITS[i % 2]}")
    return "&".join(parts + [f"group_policy={policy}"])


VGPU_QUERY = "&".join([COMPUTE] + [f"resources_G{i}=VGPU:1" for i in range(1, 5)]
                      + ["group_policy=none"])
SRIOV_QUERY = ("resources_COMPUTE=VCPU:2,MEMORY_MB:1024"
               "&resources_NET1=SRIOV_NET_VF:1&required_NET1=CUSTOM_PHYSNET_A"
               "&resources_NET2=SRIOV_NET_VF:1&required_NET2=CUSTOM_PHYSNET_A"
               "&same_subtree=_COMPUTE,_NET1,_NET2&group_policy=isolate")

# cloud: (shape, hosts, devices or None)
CASES = [
    Case("pci-2x6-none", ("pci", 2, 6), pci_query(6, "none"), 1000),
    Case("pci-2x6-isolate", ("pci", 2, 6), pci_query(6, "isolate"), None),
    Case("pci-2x8-none", ("pci", 2, 8), pci_query(8, "none"), 1000),
    Case("pci-2x8-isolate", ("pci", 2, 8), pci_query(8, "isolate"), 1000),
    Case("pci-2x8-traits", ("pci", 2, 8), pci_query(8, "none", traits=True), 1000),
    Case("pci-2x8-nolimit", ("pci", 2, 8), pci_query(8, "none"), None),
    Case("pci-2x8-9groups", ("pci", 2, 8), pci_query(9, "none"), 1000),
    Case("pci-100x8-none", ("pci", 100, 8), pci_query(8, "none"), 1000),
    Case("vgpu-10x4", ("vgpu", 10, None), VGPU_QUERY, 1000),
    Case("vgpu-10x4-nolimit", ("vgpu", 10, None), VGPU_QUERY, None),
    Case("sriov-50", ("sriov", 50, None), SRIOV_QUERY, 1000),
    Case("sriov-50-nolimit", ("sriov", 50, None), SRIOV_QUERY, None),
]


def add_arguments(parser):
    parser.add_argument("--case", nargs="+", default=None, metavar="NAME",
                        help="only these cases (default: all of " +
                             ", ".join(case.name for case in CASES) + ")")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--memory", action="store_true",
                        help="resident memory around each no-limit answer")
    parser.add_argument("--wipe", action="store_true",
                        help="DELETE every allocation, consumer and provider first")
    parser.add_argument("--url", default=None,
                        help="time a live server over HTTP (its cloud loaded through the API)")
    parser.add_argument("--vs", default=None, metavar="URL",
                        help="with --url: another live server, request for request")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="with --url: the longest one request may take")


def run(options, out):
    cases = _chosen(options.case)
    if not options.wipe:
        raise BenchError("each case loads a cloud of its own: that needs --wipe")
    if options.vs and not options.url:
        raise BenchError("--vs compares two live servers: give --url too")
    if options.url:
        if options.memory:
            raise BenchError("--memory measures this process: not with --url")
        return _served(options, cases, out)
    send = _in_process()
    loaded = None
    out.write(f"{'case':20} {'cands':>6} {'first':>9} {'median':>9} {'min':>9} {'cpu':>9}  "
              f"(ms, {options.reps} reps, in-process, {connection.vendor})\n")
    for case in cases:
        if case.cloud != loaded:
            shape, hosts, devices = loaded = case.cloud
            cloud.wipe()
            cloud.build(getattr(cloud, shape)(*([hosts, devices] if devices else [hosts])))
            cloud.analyze()
            _settle_topology(send, case.query + "&limit=1")
        query = case.query + (f"&limit={case.limit}" if case.limit else "")
        started = time.perf_counter()
        status, found = send(query)
        first = (time.perf_counter() - started) * 1000
        if status != 200:
            raise BenchError(f"{case.name}: HTTP {status}")
        times, cpu = _timed(send, query, options.reps)
        # a row as soon as measured: the slow cases of an old build take minutes
        out.write(f"{case.name:20} {found:>6} {first:9.1f} {statistics.median(times):9.1f} "
                  f"{min(times):9.1f} {statistics.median(cpu):9.1f}\n")
        out.flush()
        if options.memory and case.limit is None:
            size, peak, held, _ = _memory_growth(query)
            out.write(f"memory {case.name}: response {size / 1e6:.1f} MB, resident memory "
                      f"peak +{_mb(peak)} (process peak {_mb(_rss_kb('VmHWM'))}), "
                      f"held after +{_mb(held)}\n")
    out.write(f"engine: {_engine()}\n")


def _served(options, cases, out):
    """--url (and --vs): each case's cloud written to the live servers through the API,
    its query timed over HTTP."""
    url, vs, reps = options.url, options.vs, options.reps
    targets = [url] + ([vs] if vs and vs != url else [])   # one server named twice: once
    send = _live(url, timeout=options.timeout)
    other = _live(vs, timeout=options.timeout) if vs else None
    header = f"{'case':20} {'cands':>6} {'first':>9} {'median':>9} {'min':>9}"
    if vs:
        header += f" {'vs median':>10} {'ratio':>6}"
    out.write(f"{header}  (ms, {reps} reps, served by {url}"
              f"{f', vs {vs}' if vs else ''}; ratio: vs / url)\n")
    loaded = None
    for case in cases:
        if case.cloud != loaded:
            shape, hosts, devices = loaded = case.cloud
            plan = getattr(cloud, shape)(*([hosts, devices] if devices else [hosts]))
            for target in targets:
                cloud.wipe_over_api(target)
                cloud.build_over_api(plan, target)
            unsettled = [send] + ([other] if vs else [])
        query = case.query + (f"&limit={case.limit}" if case.limit else "")
        try:
            while unsettled:   # in the try: Placement may not answer even limit=1 in time
                _settle_topology(unsettled.pop(), case.query + "&limit=1")
            started = time.perf_counter()
            status, found = send(query)
            first = (time.perf_counter() - started) * 1000
            if status != 200:
                raise BenchError(f"{case.name}: HTTP {status}")
            if vs:
                _same_answer(other, vs, query, found, url)
            times, other_times = _paired(send, other, query, reps)
        except BenchError as exc:
            out.write(f"{case.name:20} {exc}\n")
            out.flush()
            continue
        row = (f"{case.name:20} {found:>6} {first:9.1f} {statistics.median(times):9.1f} "
               f"{min(times):9.1f}")
        if vs:
            ratios = [b / a for a, b in zip(times, other_times)]
            row += f" {statistics.median(other_times):10.1f} {statistics.median(ratios):6.2f}"
        out.write(row + "\n")
        out.flush()


def _timed(send, query, reps):
    """Wall and CPU ms of `reps` requests: this process's CPU time (with SQLite, the
    database's too) holds steadier than wall time on a machine shared with other work."""
    wall, cpu = [], []
    for _ in range(reps):
        started, used = time.perf_counter(), time.process_time()
        send(query, decode=False)
        cpu.append((time.process_time() - used) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return wall, cpu


def _chosen(names):
    if names is None:
        return CASES
    known = {case.name: case for case in CASES}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise BenchError(f"--case: no case {unknown[0]!r}")
    return [known[name] for name in names]
