"""A boot storm as nova's schedulers make it: N schedulers place M instances at once.

Usage::

    python -m bench scheduler --url http://127.0.0.1:8000 [--vs http://127.0.0.1:8001]
        [--shape flat|nested] [--hosts 1000] [--wipe] [--schedulers 10]
        [--instances 1000] [--host-subset-size 1] [--rounds 1] [--keep]

The cloud is the perf kit's (bench/cloud.py: ``flat`` compute nodes, or ``nested`` trees
of 7). With ``--wipe`` each server is emptied and the cloud written through its HTTP API
(cloud.build_over_api, ``--hosts`` hosts or trees); without it the cloud the server
holds is used (loaded by ../shared/perf/load.py, which is faster at 1,000).

Each scheduler is a thread with a connection of its own, and places instances one at a
time as nova-scheduler places a one-instance boot request (nova/scheduler/manager.py
``_schedule``, report client ``claim_resources``):

1. ``GET /allocation_candidates`` at microversion 1.36 with nova's query: the flavor's
   resources (the perf kit's canonical query of the shape), nova's
   ``root_required=!COMPUTE_STATUS_DISABLED`` and ``limit=1000``
   (``[scheduler] max_placement_results``);
2. the hosts are the root providers of the candidates, weighed as nova's default RAM
   weigher spreads: most free memory first (capacity - used of MEMORY_MB in the host's
   tree, from provider_summaries; ties keep Placement's order); one of the first
   ``--host-subset-size`` (nova's ``host_subset_size``, default 1) is picked at random
   and tried first, then the rest in order;
3. a host is claimed with its first allocation request: ``GET /allocations/{instance}``
   (1.28, nova's check for a move), then ``PUT /allocations/{instance}`` at 1.36 with
   project, user and ``consumer_generation: null``;
4. on a 409 ``placement.concurrent_update`` that is not a consumer generation conflict,
   the same claim is sent again after ``uniform(0, 2 × attempt)`` seconds, four attempts
   in all (nova's ``@retries``); on any other refusal (capacity) the next host is tried;
   when no host is left the instance gets no valid host.

Printed per round: instances placed per second (placed / the storm's wall time), p50
and p99 of a whole placement (from the first GET to the 204, failed claims and retries
included), failed claims (moved on to the next host), concurrent-update retries, no
valid host, and the over-allocation check: before the storm one no-limit query reads
every provider's capacity and usage from provider_summaries; after it every provider
claimed on is read back (``/resource_providers/{uuid}/usages``): a provider using more
than its capacity is over-allocated (the units over are summed), and its usage must be
what it held before plus what the accepted claims put there (else "lost"). Then the
round's instances are deleted (unless ``--keep``), so rounds repeat on the same cloud.

``--vs URL``: a second live server, its own database holding the same cloud; rounds
alternate between the two (A B, B A, ...), and the medians of each server's rounds
and their ratio are printed.
"""
import random
import statistics
import threading
import time
import uuid as uuidlib

import orjson   # the client parses on the server's cores too: cheaply

from bench import BenchError, cloud
from bench.cloud import Api

HELP = "N nova-like schedulers place M instances at once (a boot storm)"
VERSION = "placement 1.36"
CONSUMER_GENERATION_VERSION = "placement 1.28"
ROOT_REQUIRED = "root_required=!COMPUTE_STATUS_DISABLED"
NOVA_LIMIT = 1000
CLAIM_ATTEMPTS = 4   # nova's @retries: four tries in all
PROJECT, USER = "bench-scheduler-project", "bench-scheduler-user"


def add_arguments(parser):
    parser.add_argument("--url", required=True, help="the live server to place on")
    parser.add_argument("--vs", default=None, metavar="URL",
                        help="another live server (its own database), rounds alternating")
    parser.add_argument("--shape", choices=["flat", "nested"], default="flat")
    parser.add_argument("--hosts", type=int, default=1000,
                        help="with --wipe: compute nodes (flat) or trees (nested) to load")
    parser.add_argument("--wipe", action="store_true",
                        help="DELETE everything the servers hold and load the cloud "
                             "through their API")
    parser.add_argument("--schedulers", type=int, default=10)
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--host-subset-size", type=int, default=1,
                        help="nova's [filter_scheduler] host_subset_size (default 1)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="storms per server (alternating with --vs)")
    parser.add_argument("--keep", action="store_true",
                        help="leave the last round's instances allocated")
    parser.add_argument("--seed", type=int, default=None, help="the host picks' random seed")
    parser.add_argument("--timeout", type=float, default=300, metavar="SECONDS",
                        help="the longest one request may take")


def run(options, out):
    for name in ("schedulers", "instances", "host_subset_size", "rounds", "hosts"):
        if getattr(options, name) < 1:
            raise BenchError(f"--{name.replace('_', '-')} must be at least 1")
    servers = [options.url] + ([options.vs] if options.vs else [])
    query = (f"{cloud.QUERIES[options.shape]}&{ROOT_REQUIRED}")
    if options.wipe:
        for url in dict.fromkeys(servers):
            cloud.wipe_over_api(url)
            cloud.build_over_api(cloud.SHAPES[options.shape](options.hosts), url)
    rng = random.Random(options.seed)
    results = {url: [] for url in servers}
    out.write(f"{options.schedulers} schedulers place {options.instances} instances, "
              f"{options.shape}, host_subset_size {options.host_subset_size}\n")
    out.write(f"{'server':32} {'round':>5} {'placed/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'placed':>6} {'failed claims':>13} {'retries':>7} {'no host':>7}  "
              f"over-allocation\n")
    for number in range(options.rounds):
        order = servers if number % 2 == 0 else servers[::-1]
        for url in order:
            result = storm(url, query, options, rng)
            results[url].append(result)
            out.write(f"{url:32} {number + 1:>5} {result.rate:9.1f} {result.p50:8.1f} "
                      f"{result.p99:8.1f} {result.placed:>6} {result.failed_claims:>13} "
                      f"{result.retries:>7} {result.no_host:>7}  {result.check}\n")
            out.flush()
            if not (options.keep and number == options.rounds - 1):
                _delete(url, result.instances, options)
    if options.vs:
        a, b = (statistics.median(r.rate for r in results[url]) for url in servers)
        out.write(f"median placed/s: {options.url} {a:.1f}, {options.vs} {b:.1f}, "
                  f"ratio (url / vs) {a / b if b else float('inf'):.2f}\n")


class Result:
    """One storm's figures."""

    def __init__(self, wall, latencies, instances, failed_claims, retries, no_host, check):
        self.placed = len(latencies)
        self.rate = self.placed / wall if wall else 0.0
        ordered = sorted(latencies) or [0.0]
        self.p50 = statistics.median(ordered)
        self.p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        self.instances, self.failed_claims, self.retries = instances, failed_claims, retries
        self.no_host, self.check = no_host, check


def storm(url, query, options, rng):
    """Place options.instances instances with options.schedulers threads; a Result."""
    before = _capacity_and_usage(url, query, options.timeout)
    remaining = list(range(options.instances))
    lock = threading.Lock()
    latencies, placed, errors = [], {}, []
    counts = {"failed_claims": 0, "retries": 0, "no_host": 0}
    seeds = [rng.random() for _ in range(options.schedulers)]

    def scheduler(seed):
        picks = random.Random(seed)
        client = _Client(url, options.timeout)
        try:
            while True:
                with lock:
                    if not remaining:
                        return
                    remaining.pop()
                instance = str(uuidlib.uuid4())
                started = time.perf_counter()
                host, claimed, tallies = _place(client, query, instance, options, picks)
                with lock:
                    for key, value in tallies.items():
                        counts[key] += value
                    if host is None:
                        counts["no_host"] += 1
                    else:
                        latencies.append((time.perf_counter() - started) * 1000)
                        placed[instance] = claimed
        except BenchError as exc:
            with lock:
                errors.append(str(exc))
                remaining.clear()
        finally:
            client.close()

    threads = [threading.Thread(target=scheduler, args=(seed,)) for seed in seeds]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if errors:
        _delete(url, placed, options)
        raise BenchError(errors[0])
    check = _over_allocation(url, before, placed, options)
    return Result(wall, latencies, placed, counts["failed_claims"], counts["retries"],
                  counts["no_host"], check)


def _place(client, query, instance, options, picks):
    """One instance, as nova schedules it: (host or None, its allocations, tallies)."""
    tallies = {"failed_claims": 0, "retries": 0}
    status, body = client.call("GET", f"/allocation_candidates?{query}&limit={NOVA_LIMIT}")
    if status != 200:
        raise BenchError(f"{client.url}: GET /allocation_candidates: HTTP {status}")
    for host, request in _hosts(body, options.host_subset_size, picks):
        if _claim(client, instance, request, tallies):
            return host, request["allocations"], tallies
        tallies["failed_claims"] += 1
    return None, None, tallies


def _hosts(body, subset_size, picks):
    """[(root uuid, its first allocation request)] in the order nova tries them."""
    summaries = body["provider_summaries"]
    first = {}   # root -> its first allocation request, in the answer's order
    for request in body["allocation_requests"]:
        for rp_uuid in request["allocations"]:
            root = summaries[rp_uuid]["root_provider_uuid"]
            first.setdefault(root, request)
    free = dict.fromkeys(first, 0)
    for summary in summaries.values():
        memory = summary["resources"].get("MEMORY_MB")
        if memory and summary["root_provider_uuid"] in free:
            free[summary["root_provider_uuid"]] += memory["capacity"] - memory["used"]
    weighed = sorted(first, key=lambda root: -free[root])   # stable: ties keep the order
    if not weighed:
        return []
    chosen = picks.choice(weighed[:subset_size])
    weighed.remove(chosen)
    return [(root, first[root]) for root in [chosen] + weighed]


def _claim(client, instance, request, tallies):
    """nova's claim_resources: True once the PUT is accepted."""
    for attempt in range(CLAIM_ATTEMPTS):
        time.sleep(random.uniform(0, attempt * 2))
        status, _ = client.call("GET", f"/allocations/{instance}",
                                version=CONSUMER_GENERATION_VERSION)
        if status != 200:
            raise BenchError(f"{client.url}: GET /allocations/{instance}: HTTP {status}")
        body = dict(request, project_id=PROJECT, user_id=USER, consumer_generation=None)
        status, answer = client.call("PUT", f"/allocations/{instance}", body)
        if status == 204:
            return True
        if status != 409:
            raise BenchError(f"{client.url}: PUT /allocations/{instance}: HTTP {status}")
        error = answer["errors"][0]
        if (error.get("code") != "placement.concurrent_update"
                or "consumer generation conflict" in error["detail"]):
            return False
        tallies["retries"] += 1
    return False


def _capacity_and_usage(url, query, timeout):
    """{(provider uuid, class): (capacity, used)} of every provider the query's no-limit
    answer summarises (at 1.29+ every provider of the trees it names)."""
    client = _Client(url, timeout)
    try:
        status, body = client.call("GET", f"/allocation_candidates?{query}")
    finally:
        client.close()
    if status != 200:
        raise BenchError(f"{url}: GET /allocation_candidates: HTTP {status}")
    return {(rp_uuid, name): (amounts["capacity"], amounts["used"])
            for rp_uuid, summary in body["provider_summaries"].items()
            for name, amounts in summary["resources"].items()}


def _over_allocation(url, before, placed, options):
    """'OK (n providers)', or what is over capacity and what is lost, of every provider
    the storm's accepted claims named."""
    claimed = {}
    for allocations in placed.values():
        for rp_uuid, entry in allocations.items():
            for name, amount in entry["resources"].items():
                claimed[(rp_uuid, name)] = claimed.get((rp_uuid, name), 0) + amount
    providers = sorted({rp_uuid for rp_uuid, _ in claimed})
    usages = {}

    def read(chunk):
        client = _Client(url, options.timeout)
        try:
            for rp_uuid in chunk:
                status, body = client.call("GET", f"/resource_providers/{rp_uuid}/usages")
                if status != 200:
                    raise BenchError(f"{url}: GET usages of {rp_uuid}: HTTP {status}")
                usages[rp_uuid] = body["usages"]
        finally:
            client.close()

    _in_threads(read, providers, options.schedulers)
    over, units, lost = set(), 0, 0
    for (rp_uuid, name), amount in claimed.items():
        capacity, used_before = before.get((rp_uuid, name), (0, 0))
        used = usages[rp_uuid].get(name, 0)
        if used > capacity:
            over.add(rp_uuid)
            units += used - capacity
        if used != used_before + amount:
            lost += 1
    if not over and not lost:
        return f"OK ({len(providers)} providers)"
    return (f"OVER-ALLOCATED: {len(over)} of {len(providers)} providers, {units} units "
            f"over capacity; {lost} usages not what was claimed")


def _delete(url, instances, options):
    """DELETE the storm's instances (their allocations), a few at a time."""
    def delete(chunk):
        client = _Client(url, options.timeout)
        try:
            for instance in chunk:
                status, _ = client.call("DELETE", f"/allocations/{instance}")
                if status not in (204, 404):
                    raise BenchError(f"{url}: DELETE /allocations/{instance}: HTTP {status}")
        finally:
            client.close()

    _in_threads(delete, sorted(instances), options.schedulers)


def _in_threads(work, items, count):
    """work(chunk) on `count` threads, items dealt round-robin; the first BenchError."""
    chunks = [items[i::count] for i in range(count)]
    errors = []

    def guarded(chunk):
        try:
            work(chunk)
        except BenchError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(chunk,)) for chunk in chunks if chunk]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


class _Client(Api):
    """One keep-alive connection: call(method, path, body) -> (status, decoded body)."""

    def __init__(self, url, timeout):
        super().__init__(url, timeout=timeout)

    def call(self, method, path, body=None, version=VERSION):
        status, content = self.exchange(method, path, body, version)
        return status, (orjson.loads(content) if content else None)
