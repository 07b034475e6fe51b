"""Time GET /allocation_candidates on the perf-kit data shapes.

Usage::

    python manage.py benchmark_candidates [--shape flat|nested|both] [--count 1000 ...]
        [--limits none,1000,5] [--suite] [--memory] [--reps 20] [--load/--no-load]
        [--wipe] [--url http://127.0.0.1:8000 [--vs http://127.0.0.1:8001]]

* ``--load`` (default) bulk-creates the data in the configured database
  (DATABASE_URL) through the models, the same shapes as
  ../shared/perf/load.py: ``flat`` = N compute nodes (VCPU 32 max 16,
  MEMORY_MB 8192 min 128, DISK_GB 8192 min 5; aggregates and traits chosen
  so every node has aggregate 14a5c8a3-... and HW_CPU_X86_AVX2); ``nested``
  = N trees of 7 providers (compute node -> 2 NUMA nodes -> FPGAs/PGPU).
  The providers table must be empty unless ``--wipe`` is given, which
  DELETES every allocation, consumer and provider first (never use it on a
  database you care about). Several shapes or counts (``--shape both``,
  ``--count 1000 10000``) are each loaded and timed on their own, like the
  perf kit's separate runs, and need ``--wipe``.
  After loading, planner statistics are refreshed (VACUUM ANALYZE).
* Each canonical query of ../shared/perf/bench.py (flat and/or nested, with
  the ``--limits``: no limit, limit=1000 and limit=5 by default) is sent
  ``--reps`` times after the warm-up (requests around a wait for the provider
  topology to settle, candidates/sql/topology.py), in-process through Django's test
  client, or to a live server with ``--url`` (then nothing is loaded unless
  ``--load`` is given explicitly and the server uses the same database). A
  table of median / p95 / min latency in ms, the number of candidates and
  (in-process) the number of SQL statements of one request is printed.
* ``--vs URL`` (with ``--url``): a paired comparison of two live servers on the same
  data (two builds, or ours and Placement). Each repetition asks both, the order
  alternating, and a line per query gives both medians and the median of the
  repetitions' ratios (vs / url): on a shared machine, whose load moves single medians
  by a fifth from one run to the next, the ratio of requests made side by side holds
  still. Both servers must give the same number of candidates.
* ``--suite``: the figures issue 17 asks for, in one run: flat and nested at
  1,000 and 10,000 (every limit) and flat at 50,000 with ``limit=5``
  (needs ``--wipe``; it replaces ``--shape``, ``--count`` and ``--limits``).
* ``--memory`` (in-process): after timing a no-limit query, the process's
  resident memory (Linux /proc/self/status) around answers served through
  Django's WSGI handler, as a worker serves them: the peak growth during one,
  what is still held after it, and after 20 more in a row (no forced
  collection between them), beside the response size.

Example (PostgreSQL)::

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/bench \\
        python manage.py migrate && \\
    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/bench \\
        python manage.py benchmark_candidates --suite --memory --wipe
"""
import gc
import http.client
import io
import json
import statistics
import sys
import time
import uuid as uuidlib
from urllib.parse import urlparse

from django.conf import settings
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections, connection, transaction
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext

from allocations.models import Allocation, Consumer
from candidates import compiled
from providers.models import (
    Aggregate,
    Inventory,
    ProviderAggregate,
    ProviderTrait,
    ResourceClass,
    ResourceProvider,
    Trait,
)

FLAT_AGGREGATES = [
    "14a5c8a3-5a99-4e8f-88be-00d85fcb1c17",
    "66d98e7c-3c25-485d-a0dc-1cea651884de",
    "a59dbb28-fd98-4c6e-9ec5-ae5f3d04b0aa",
]
FLAT_TRAITS = ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE2", "STORAGE_DISK_SSD"]
QUERIES = {
    "flat": ("resources=VCPU:1,DISK_GB:10,MEMORY_MB:256"
             f"&member_of={FLAT_AGGREGATES[0]}&required=HW_CPU_X86_AVX2"),
    "nested": ("resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH"
               "&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO"
               "&resources_FPGA=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_FPGA"),
}
HEADERS = {"x-auth-token": "admin", "openstack-api-version": "placement latest"}
LIMITS = ("none", "1000", "5")
# Issue 17's "done when": (shape, count, limits).
SUITE = [("flat", 1000, LIMITS), ("flat", 10000, LIMITS), ("flat", 50000, ("5",)),
         ("nested", 1000, LIMITS), ("nested", 10000, LIMITS)]


class Command(BaseCommand):
    help = "Load perf-shaped data and time GET /allocation_candidates (see module docstring)."

    def add_arguments(self, parser):
        parser.add_argument("--shape", choices=["flat", "nested", "both"], default="both")
        parser.add_argument("--count", type=int, nargs="+", default=[1000],
                            help="providers (flat) or trees (nested); several are timed in turn")
        parser.add_argument("--limits", default=",".join(LIMITS),
                            help="comma-separated: none and/or limit values (default %(default)s)")
        parser.add_argument("--suite", action="store_true",
                            help="issue 17's set: flat and nested at 1,000 and 10,000, "
                                 "flat 50,000 with limit=5 (needs --wipe)")
        parser.add_argument("--memory", action="store_true",
                            help="measure resident memory around one no-limit request")
        parser.add_argument("--reps", type=int, default=20)
        parser.add_argument("--url", default=None)
        parser.add_argument("--vs", default=None, metavar="URL",
                            help="with --url: time another live server alongside it, "
                                 "request for request")
        parser.add_argument("--load", dest="load", action="store_true", default=None)
        parser.add_argument("--no-load", dest="load", action="store_false")
        parser.add_argument("--wipe", action="store_true")

    def handle(self, *args, shape, count, limits, suite, memory, reps, url, load, wipe,
               vs=None, **options):
        if vs and not url:
            raise CommandError("--vs compares two live servers: give --url too")
        if isinstance(count, int):   # call_command(count=4)
            count = [count]
        if suite:
            plan = SUITE
        else:
            limits = tuple(part.strip() for part in limits.split(",") if part.strip())
            for part in limits:
                if part != "none" and not part.isdigit():
                    raise CommandError(f"--limits: {part!r} is neither none nor a number")
            shapes = ["flat", "nested"] if shape == "both" else [shape]
            plan = [(name, n, limits) for name in shapes for n in count]
        if load is None:
            load = url is None
        if load and len(plan) > 1 and not wipe:
            raise CommandError("several shapes or counts are each loaded on their own: "
                               "that needs --wipe")
        if memory and url:
            raise CommandError("--memory measures this process: not with --url")
        send = _live(url) if url else _in_process()
        other = _live(vs) if vs else None
        rows, memory_rows, paired_rows = [], [], []
        for name, n, wanted in plan:
            if load:
                if wipe:
                    _wipe()
                elif ResourceProvider.objects.exists():
                    raise CommandError("providers exist: use --no-load to time them, or --wipe")
                started = time.perf_counter()
                (load_flat if name == "flat" else load_nested)(n)
                _analyze()
                self.stdout.write(f"loaded {name} x{n} in "
                                  f"{time.perf_counter() - started:.1f}s")
            elif url:
                n = _live_root_count(url)   # the local database may not even exist
            else:
                n = ResourceProvider.objects.filter(parent=None).count()
            _settle_topology(send, QUERIES[name])
            if other:
                _settle_topology(other, QUERIES[name])
            for limit in wanted:
                query = QUERIES[name] + ("" if limit == "none" else f"&limit={limit}")
                label = "no limit" if limit == "none" else f"limit={limit}"
                status, found = send(query)
                if status != 200:
                    raise CommandError(f"{query}: HTTP {status}")
                if other:
                    _same_answer(other, vs, query, found, url)
                statements = "-" if url else _statements(send, query)
                times, other_times = _timed(send, other, query, reps)
                if other:
                    paired_rows.append((name, n, label, statistics.median(times),
                                        statistics.median(other_times),
                                        statistics.median(b / a for a, b in
                                                          zip(times, other_times))))
                times.sort()
                p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
                rows.append((name, n, label, found, statements, statistics.median(times), p95,
                             times[0]))
                if memory and limit == "none":
                    memory_rows.append((name, n) + _memory_growth(query))
        where = "live " + url if url else f"in-process, {connection.vendor}, {_engine()}"
        self.stdout.write(f"{'shape':8} {'size':>6} {'query':12} {'cands':>6} {'stmts':>5} "
                          f"{'median':>8} {'p95':>8} {'min':>8}  (ms, {reps} reps, {where})")
        for name, n, label, found, statements, median, p95, fastest in rows:
            self.stdout.write(f"{name:8} {n:>6} {label:12} {found:>6} {statements:>5} "
                              f"{median:8.1f} {p95:8.1f} {fastest:8.1f}")
        for name, n, label, median, other_median, ratio in paired_rows:
            self.stdout.write(f"paired {name} {n} {label}: {url} {median:.1f} ms, {vs} "
                              f"{other_median:.1f} ms, median ratio (vs / url) {ratio:.3f}")
        for name, n, size, peak, held, held_after_many in memory_rows:
            self.stdout.write(f"memory {name} {n} no limit: response {size / 1e6:.1f} MB, "
                              f"resident memory peak +{_mb(peak)}, held after +{_mb(held)}, "
                              f"after {ANSWERS_IN_A_ROW} more +{_mb(held_after_many)}")


def _timed(send, other, query, reps):
    """The ms of `reps` requests of query to send, and, with another server, of as many
    to it, made in pairs whose order alternates (which goes first gains a little)."""
    times, other_times = [], []
    for rep in range(reps):
        turns = [(send, times), (other, other_times)] if other else [(send, times)]
        if rep % 2:
            turns.reverse()
        for sender, into in turns:
            started = time.perf_counter()
            sender(query, decode=False)
            into.append((time.perf_counter() - started) * 1000)
    return times, other_times


def _same_answer(other, vs, query, found, url):
    """Refuse to compare servers that answer differently."""
    status, other_found = other(query)
    if status != 200:
        raise CommandError(f"{vs}: {query}: HTTP {status}")
    if other_found != found:
        raise CommandError(f"{query}: {url} answers {found} candidates, {vs} {other_found}")


def _in_process():
    client = Client()
    extra = {"HTTP_X_AUTH_TOKEN": "admin", "HTTP_OPENSTACK_API_VERSION": "placement latest"}

    def send(query, decode=True):
        response = client.get("/allocation_candidates?" + query, **extra)
        if not decode:
            return response.status_code, None
        body = json.loads(response.content)
        return response.status_code, len(body.get("allocation_requests", []))

    return send


def _settle_topology(send, query):
    """Time what a settled cloud answers: requests read the provider topology from each
    process's snapshot once its token has been unchanged for
    PLACEMENT_TOPOLOGY_SETTLE_SECONDS (candidates/sql/topology.py), and loading the data
    has just changed it. A live server's workers each take one of the requests after
    the wait (the same setting is assumed there)."""
    send(query)
    time.sleep(settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS)
    for _ in range(8):
        send(query, decode=False)


def _engine():
    """Which form of the engine's modules this process runs (candidates/compiled.py)."""
    in_use = compiled.in_use()
    return f"compiled {'+'.join(in_use)}" if in_use else "plain Python"


def _statements(send, query):
    """SQL statements one in-process request runs."""
    with CaptureQueriesContext(connection) as captured:
        send(query)
    return len(captured.captured_queries)


def _rss_kb(field="VmRSS"):
    """This process's resident memory (or its peak, VmHWM) in kB; None off Linux."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak():
    """Start VmHWM afresh from the current resident size (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


# --memory: answers served in a row after the first, as a busy worker serves them
ANSWERS_IN_A_ROW = 20


def _memory_growth(query):
    """(response bytes, peak growth kB, growth held after one answer kB, growth held after
    ANSWERS_IN_A_ROW more kB) of no-limit answers served through Django's WSGI handler as
    a gunicorn worker serves them (the test client keeps references of its own), with no
    forced collection in between; growths are None where they cannot be measured."""
    serve = wsgi_get("/allocation_candidates", query)
    serve()   # warm caches and pools
    gc.collect()
    before = _rss_kb()
    has_peak = _reset_peak()
    size = serve()
    peak = _rss_kb("VmHWM") if has_peak else None
    held = _rss_kb()
    for _ in range(ANSWERS_IN_A_ROW):
        serve()
    held_after_many = _rss_kb()
    if before is None:
        return size, None, None, None
    return (size, peak - before if peak is not None else None, held - before,
            held_after_many - before)


def wsgi_get(path, query):
    """A function sending GET path?query through Django's WSGI handler as a gunicorn
    worker does (tests/api/test_response_release.py uses it too); it reads and closes
    the body as a server does and returns its size (CommandError unless 200)."""
    handler = WSGIHandler()

    def serve():
        environ = {
            "REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query,
            "SERVER_NAME": "localhost", "SERVER_PORT": "80", "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr,
            "HTTP_X_AUTH_TOKEN": "admin", "HTTP_OPENSTACK_API_VERSION": "placement latest",
        }
        status = []
        # one connection throughout, as a worker keeps it for conn_max_age (and the
        # test client does)
        signals.request_started.disconnect(close_old_connections)
        signals.request_finished.disconnect(close_old_connections)
        try:
            body = handler(environ, lambda line, headers, exc_info=None: status.append(line))
            size = sum(len(chunk) for chunk in body)
            body.close()
        finally:
            signals.request_started.connect(close_old_connections)
            signals.request_finished.connect(close_old_connections)
        if not status[0].startswith("200"):
            raise CommandError(f"{path}?{query}: HTTP {status[0]}")
        return size

    return serve


def _mb(kb):
    return "n/a" if kb is None else f"{kb / 1024:.1f} MB"


def _live(url):
    parsed = urlparse(url)
    prefix = parsed.path.rstrip("/")
    state = {}

    def send(query, decode=True):
        for attempt in (1, 2):
            conn = state.get("conn")
            if conn is None:
                conn = state["conn"] = http.client.HTTPConnection(parsed.hostname,
                                                                  parsed.port or 80)
            try:
                conn.request("GET", f"{prefix}/allocation_candidates?{query}", headers=HEADERS)
                response = conn.getresponse()
                content = response.read()
                if not decode:
                    return response.status, None
                body = json.loads(content)
                return response.status, len(body.get("allocation_requests", []))
            except (http.client.HTTPException, OSError) as exc:
                conn.close()
                state.pop("conn", None)
                if attempt == 2:
                    raise CommandError(f"{url}: {exc}") from exc

    return send


def _live_root_count(url):
    """How many root providers the server at url holds (the size a table row shows)."""
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port or 80)
    try:
        conn.request("GET", f"{parsed.path.rstrip('/')}/resource_providers", headers=HEADERS)
        response = conn.getresponse()
        content = response.read()
    except (http.client.HTTPException, OSError) as exc:
        raise CommandError(f"{url}: {exc}") from exc
    finally:
        conn.close()
    if response.status != 200:
        raise CommandError(f"{url}/resource_providers: HTTP {response.status}")
    providers = json.loads(content)["resource_providers"]
    return sum(1 for provider in providers if provider["parent_provider_uuid"] is None)


# --- loading ---------------------------------------------------------------------------------


def _analyze():
    """Fresh bulk-loaded tables: refresh planner statistics as autovacuum would."""
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    else:  # SQLite, or inside a transaction (tests), where VACUUM cannot run
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def _wipe():
    with transaction.atomic():
        Allocation.objects.all().delete()
        Consumer.objects.all().delete()
        ProviderTrait.objects.all().delete()
        ProviderAggregate.objects.all().delete()
        Inventory.objects.all().delete()
        ResourceProvider.objects.update(parent=None)
        ResourceProvider.objects.all().delete()


def _ids(model, field, names):
    existing = dict(model.objects.filter(**{f"{field}__in": names}).values_list(field, "id"))
    missing = [n for n in names if n not in existing]
    if missing:
        model.objects.bulk_create([model(**{field: n}) for n in missing], ignore_conflicts=True)
        existing = dict(model.objects.filter(**{f"{field}__in": names})
                        .values_list(field, "id"))
    return existing


def _next_tree_id():
    last = ResourceProvider.objects.order_by("-tree_id").values_list("tree_id", flat=True).first()
    return (last or 0) + 1


def _providers(specs):
    """Bulk-create providers from dicts with MPTT fields; returns them with ids."""
    objs = [ResourceProvider(uuid=str(uuidlib.uuid4()), **spec) for spec in specs]
    for obj in objs:
        obj.name = obj.name or obj.uuid
    ResourceProvider.objects.bulk_create(objs, batch_size=2000)
    if any(obj.pk is None for obj in objs):  # backends that do not return ids
        by_uuid = dict(ResourceProvider.objects.filter(
            uuid__in=[o.uuid for o in objs]).values_list("uuid", "id"))
        for obj in objs:
            obj.pk = obj.id = by_uuid[obj.uuid]
    return objs


def _inventory(provider, rc_id, total, **fields):
    return Inventory(provider_id=provider.id, resource_class_id=rc_id, total=total, **fields)


@transaction.atomic
def load_flat(count):
    rc = _ids(ResourceClass, "name", ["VCPU", "MEMORY_MB", "DISK_GB"])
    traits = _ids(Trait, "name", FLAT_TRAITS)
    aggs = _ids(Aggregate, "uuid", FLAT_AGGREGATES)
    tree = _next_tree_id()
    nodes = _providers([{"name": None, "tree_id": tree + i, "lft": 1, "rght": 2, "level": 0}
                        for i in range(count)])
    ResourceProvider.objects.filter(id__in=[n.id for n in nodes]).update(root=F("id"))
    inventories, links, tags = [], [], []
    for i, node in enumerate(nodes):
        inventories += [
            _inventory(node, rc["VCPU"], 32, max_unit=16),
            _inventory(node, rc["MEMORY_MB"], 8192, min_unit=128, max_unit=8192),
            _inventory(node, rc["DISK_GB"], 8192, min_unit=5, max_unit=8192),
        ]
        links += [ProviderAggregate(provider_id=node.id, aggregate_id=aggs[a])
                  for a in FLAT_AGGREGATES[:i % 3 + 1]]
        tags += [ProviderTrait(provider_id=node.id, trait_id=traits[t])
                 for t in FLAT_TRAITS[:(i // 3) % 3 + 1]]
    Inventory.objects.bulk_create(inventories, batch_size=5000)
    ProviderAggregate.objects.bulk_create(links, batch_size=5000)
    ProviderTrait.objects.bulk_create(tags, batch_size=5000)


@transaction.atomic
def load_nested(count):
    rc = _ids(ResourceClass, "name", ["VCPU", "MEMORY_MB", "DISK_GB", "FPGA", "VGPU"])
    traits = _ids(Trait, "name", ["COMPUTE_VOLUME_MULTI_ATTACH", "HW_NUMA_ROOT", "CUSTOM_FOO"])
    tree = _next_tree_id()
    cns = _providers([{"name": None, "tree_id": tree + i, "lft": 1, "rght": 14, "level": 0}
                      for i in range(count)])
    ResourceProvider.objects.filter(id__in=[n.id for n in cns]).update(root=F("id"))

    def children(parents, label, lft, rght, level):
        return _providers([{"name": f"{label} {p.uuid}", "parent_id": p.id, "root_id": p.root_id
                            if p.root_id else p.id, "tree_id": p.tree_id, "lft": lft,
                            "rght": rght, "level": level} for p in parents])

    numa0 = children(cns, "numa0", 2, 7, 1)
    numa1 = children(cns, "numa1", 8, 13, 1)
    fpga00 = children(numa0, "fpga0-0", 3, 4, 2)
    pgpu00 = children(numa0, "pgpu0-0", 5, 6, 2)
    fpga10 = children(numa1, "fpga1-0", 9, 10, 2)
    fpga11 = children(numa1, "fpga1-1", 11, 12, 2)
    inventories, tags = [], []
    for cn in cns:
        inventories.append(_inventory(cn, rc["DISK_GB"], 20480))
        tags.append(ProviderTrait(provider_id=cn.id, trait_id=traits["COMPUTE_VOLUME_MULTI_ATTACH"]))
    for n in numa0:
        inventories += [_inventory(n, rc["VCPU"], 4, reserved=2),
                        _inventory(n, rc["MEMORY_MB"], 2048, min_unit=512, step_size=256)]
        tags.append(ProviderTrait(provider_id=n.id, trait_id=traits["HW_NUMA_ROOT"]))
    for n in numa1:
        inventories += [_inventory(n, rc["VCPU"], 4),
                        _inventory(n, rc["MEMORY_MB"], 2048, min_unit=256, max_unit=1024)]
        tags += [ProviderTrait(provider_id=n.id, trait_id=traits["HW_NUMA_ROOT"]),
                 ProviderTrait(provider_id=n.id, trait_id=traits["CUSTOM_FOO"])]
    for leaf in fpga00 + fpga10 + fpga11:
        inventories.append(_inventory(leaf, rc["FPGA"], 1))
    for leaf in pgpu00:
        inventories.append(_inventory(leaf, rc["VGPU"], 8))
    Inventory.objects.bulk_create(inventories, batch_size=5000)
    ProviderTrait.objects.bulk_create(tags, batch_size=5000)
