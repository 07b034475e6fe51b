"""Time GET /allocation_candidates on the perf-kit data shapes.

Usage::

    python -m bench candidates [--shape flat|nested|both] [--count 1000 ...]
        [--limits none,1000,5] [--suite] [--memory] [--reps 20] [--load/--no-load]
        [--wipe] [--url http://127.0.0.1:8000 [--vs http://127.0.0.1:8001]]

* ``--load`` (default) bulk-creates the data in the configured database
  (DATABASE_URL), the perf kit's shapes (../shared/perf/load.py, built by
  bench/cloud.py): ``flat`` = N compute nodes, ``nested`` = N trees of 7 providers
  (compute node -> 2 NUMA nodes -> FPGAs/PGPU). The providers table must be empty
  unless ``--wipe`` is given, which DELETES every allocation, consumer and provider
  first (never use it on a database you care about). Several shapes or counts
  (``--shape both``, ``--count 1000 10000``) are each loaded and timed on their own,
  like the perf kit's separate runs, and need ``--wipe``. After loading, planner
  statistics are refreshed (VACUUM ANALYZE).
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
        python -m bench candidates --suite --memory --wipe
"""
import gc
import http.client
import json
import statistics
import time
from urllib.parse import urlparse

from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench import BenchError, cloud
from bench.wsgi import wsgi_get
from candidates import compiled
from providers.models import ResourceProvider

HELP = "load the perf kit's shapes and time GET /allocation_candidates"
HEADERS = {"x-auth-token": "admin", "openstack-api-version": "placement latest"}
LIMITS = ("none", "1000", "5")
# Issue 17's "done when": (shape, count, limits).
SUITE = [("flat", 1000, LIMITS), ("flat", 10000, LIMITS), ("flat", 50000, ("5",)),
         ("nested", 1000, LIMITS), ("nested", 10000, LIMITS)]
# --memory: answers served in a row after the first, as a busy worker serves them
ANSWERS_IN_A_ROW = 20


def add_arguments(parser):
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
    parser.add_argument("--wipe", action="store_true",
                        help="DELETE every allocation, consumer and provider first")


def run(options, out):
    url, vs, load, wipe, reps = (options.url, options.vs, options.load, options.wipe,
                                 options.reps)
    if vs and not url:
        raise BenchError("--vs compares two live servers: give --url too")
    plan = _plan(options)
    if load is None:
        load = url is None
    if load and len(plan) > 1 and not wipe:
        raise BenchError("several shapes or counts are each loaded on their own: "
                         "that needs --wipe")
    if options.memory and url:
        raise BenchError("--memory measures this process: not with --url")
    send = _live(url) if url else _in_process()
    other = _live(vs) if vs else None
    rows, memory_rows, paired_rows = [], [], []
    for name, n, wanted in plan:
        if load:
            if wipe:
                cloud.wipe()
            elif ResourceProvider.objects.exists():
                raise BenchError("providers exist: use --no-load to time them, or --wipe")
            started = time.perf_counter()
            cloud.build(cloud.SHAPES[name](n))
            cloud.analyze()
            out.write(f"loaded {name} x{n} in {time.perf_counter() - started:.1f}s\n")
        elif url:
            n = _live_root_count(url)   # the local database may not even exist
        else:
            n = ResourceProvider.objects.filter(parent=None).count()
        _settle_topology(send, cloud.QUERIES[name])
        if other:
            _settle_topology(other, cloud.QUERIES[name])
        for limit in wanted:
            query = cloud.QUERIES[name] + ("" if limit == "none" else f"&limit={limit}")
            label = "no limit" if limit == "none" else f"limit={limit}"
            status, found = send(query)
            if status != 200:
                raise BenchError(f"{query}: HTTP {status}")
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
            if options.memory and limit == "none":
                memory_rows.append((name, n) + _memory_growth(query))
    where = "live " + url if url else f"in-process, {connection.vendor}, {_engine()}"
    out.write(f"{'shape':8} {'size':>6} {'query':12} {'cands':>6} {'stmts':>5} "
              f"{'median':>8} {'p95':>8} {'min':>8}  (ms, {reps} reps, {where})\n")
    for name, n, label, found, statements, median, p95, fastest in rows:
        out.write(f"{name:8} {n:>6} {label:12} {found:>6} {statements:>5} "
                  f"{median:8.1f} {p95:8.1f} {fastest:8.1f}\n")
    for name, n, label, median, other_median, ratio in paired_rows:
        out.write(f"paired {name} {n} {label}: {url} {median:.1f} ms, {vs} "
                  f"{other_median:.1f} ms, median ratio (vs / url) {ratio:.3f}\n")
    for name, n, size, peak, held, held_after_many in memory_rows:
        out.write(f"memory {name} {n} no limit: response {size / 1e6:.1f} MB, "
                  f"resident memory peak +{_mb(peak)}, held after +{_mb(held)}, "
                  f"after {ANSWERS_IN_A_ROW} more +{_mb(held_after_many)}\n")


def _plan(options):
    """[(shape, count, limits)] to load and time."""
    if options.suite:
        return SUITE
    limits = tuple(part.strip() for part in options.limits.split(",") if part.strip())
    for part in limits:
        if part != "none" and not part.isdigit():
            raise BenchError(f"--limits: {part!r} is neither none nor a number")
    shapes = ["flat", "nested"] if options.shape == "both" else [options.shape]
    return [(name, n, limits) for name in shapes for n in options.count]


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
        raise BenchError(f"{vs}: {query}: HTTP {status}")
    if other_found != found:
        raise BenchError(f"{query}: {url} answers {found} candidates, {vs} {other_found}")


def _in_process():
    client = Client()
    extra = {"HTTP_X_AUTH_TOKEN": "admin", "HTTP_OPENSTACK_API_VERSION": "placement latest"}

    def send(query, decode=True):
        response = client.get("/allocation_candidates?" + query, **extra)
        content = response.getvalue()   # a very large answer is encoded as it is read
        if not decode:
            return response.status_code, None
        body = json.loads(content)
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


def _memory_growth(query):
    """(response bytes, peak growth kB, growth held after one answer kB, growth held after
    ANSWERS_IN_A_ROW more kB) of no-limit answers served through Django's WSGI handler as
    a gunicorn worker serves them, with no forced collection in between; growths are None
    where they cannot be measured."""
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


def _mb(kb):
    return "n/a" if kb is None else f"{kb / 1024:.1f} MB"


def _live(url, timeout=None):
    """send(query, decode=True) -> (status, candidates or None) of GET
    /allocation_candidates?query at the live server `url` (a keep-alive connection;
    `timeout`: seconds one request may take)."""
    parsed = urlparse(url)
    prefix = parsed.path.rstrip("/")
    state = {}

    def send(query, decode=True):
        for attempt in (1, 2):
            conn = state.get("conn")
            if conn is None:
                conn = state["conn"] = http.client.HTTPConnection(
                    parsed.hostname, parsed.port or 80, timeout=timeout)
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
                    raise BenchError(f"{url}: {exc}") from exc

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
        raise BenchError(f"{url}: {exc}") from exc
    finally:
        conn.close()
    if response.status != 200:
        raise BenchError(f"{url}/resource_providers: HTTP {response.status}")
    providers = json.loads(content)["resource_providers"]
    return sum(1 for provider in providers if provider["parent_provider_uuid"] is None)
