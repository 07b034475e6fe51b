"""Prometheus metrics (prometheus-client), correct under several gunicorn workers.

With PROMETHEUS_MULTIPROC_DIR set (placement_site/gunicorn_conf.py sets it for
gunicorn), every worker writes its values to files in that directory and a scrape,
answered by whichever worker, sums counters and histograms over all workers; the
per-worker gauges keep a `pid` label. Without it (one process: runserver, tests) the
default registry is used, with prometheus-client's own process metrics.

Label values are bounded: route templates (never raw paths), known methods, status
codes, microversions and Placement's error codes.
"""
import os
import resource
import time

from django.conf import settings
from django.http import HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
COUNT_BUCKETS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000, 50000)

REQUESTS = Counter(
    "placement_http_requests", "HTTP requests answered, by route template.",
    ["route", "method", "status", "microversion"])
REQUEST_SECONDS = Histogram(
    "placement_http_request_duration_seconds", "Time to answer a request, by route template.",
    ["route", "method"], buckets=LATENCY_BUCKETS)
REQUEST_DB_QUERIES = Histogram(
    "placement_http_request_db_queries", "Database queries run while answering a request.",
    ["route", "method"], buckets=COUNT_BUCKETS)
REQUEST_DB_SECONDS = Histogram(
    "placement_http_request_db_duration_seconds",
    "Time spent in database queries while answering a request.",
    ["route", "method"], buckets=LATENCY_BUCKETS)
CONFLICTS = Counter(
    "placement_http_conflicts", "409 answers, by route template and Placement error code.",
    ["route", "method", "code"])

CANDIDATES_SECONDS = Histogram(
    "placement_allocation_candidates_duration_seconds",
    "Time to compute and render GET /allocation_candidates.", buckets=LATENCY_BUCKETS)
CANDIDATES_RETURNED = Histogram(
    "placement_allocation_candidates_returned",
    "Allocation requests in a GET /allocation_candidates answer.", buckets=COUNT_BUCKETS)
CANDIDATES_PROVIDERS_SCANNED = Histogram(
    "placement_allocation_candidates_providers_scanned",
    "Providers the candidates engine loaded facts for.", buckets=COUNT_BUCKETS)
CANDIDATES_GENERATION = Counter(
    "placement_allocation_candidates_generations",
    "Candidate generations; limited=true when limit / max_allocation_candidates stopped "
    "the engine before it had walked every anchor.", ["limited"])

ALLOCATION_RETRIES = Counter(
    "placement_allocation_write_retries",
    "Allocation writes started over after a concurrent change.")
CAPACITY_REFUSALS = Counter(
    "placement_allocation_capacity_refusals",
    "Allocation writes refused because they would exceed a provider's capacity.")
REPLICA_FALLBACKS = Counter(
    "placement_replica_fallbacks",
    "Replica-routed requests the primary answered (replicas down or lagging).")


def _worker_gauge(name, documentation):
    """A gauge of one worker process: "liveall" keeps one series per live worker (pid label)."""
    return Gauge(name, documentation, multiprocess_mode="liveall")


WORKER_CPU_SECONDS = _worker_gauge(
    "placement_worker_cpu_seconds", "User and system CPU time of the worker process.")
WORKER_MEMORY_BYTES = _worker_gauge(
    "placement_worker_resident_memory_bytes", "Resident memory of the worker process.")
WORKER_START_TIME = _worker_gauge(
    "placement_worker_start_time_seconds", "When the worker process started (Unix time).")
# Over all workers: "livesum" adds the live workers' values.
WORKER_REQUESTS_IN_PROGRESS = Gauge(
    "placement_worker_requests_in_progress", "Requests being answered, over all workers.",
    multiprocess_mode="livesum")

WORKER_UPDATE_INTERVAL = 5.0  # seconds between refreshes of a worker's gauges
_next_worker_update = 0.0
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def multiprocess_mode():
    return bool(settings.PROMETHEUS_MULTIPROC_DIR)


def worker_started():
    """Called once per worker (gunicorn post_fork, or on first use) so that a worker
    shows up in the metrics before it has answered anything."""
    WORKER_START_TIME.set(time.time())
    update_worker_gauges(force=True)


def update_worker_gauges(force=False):
    global _next_worker_update
    now = time.monotonic()
    if not force and now < _next_worker_update:
        return
    _next_worker_update = now + WORKER_UPDATE_INTERVAL
    usage = resource.getrusage(resource.RUSAGE_SELF)
    WORKER_CPU_SECONDS.set(usage.ru_utime + usage.ru_stime)
    WORKER_MEMORY_BYTES.set(_resident_bytes(usage))


def _resident_bytes(usage):
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return usage.ru_maxrss * 1024  # peak, in KiB on Linux


def observe_request(route, method, status, microversion, seconds, db_queries, db_seconds,
                    error_code=None):
    REQUESTS.labels(route, method, status, microversion).inc()
    REQUEST_SECONDS.labels(route, method).observe(seconds)
    REQUEST_DB_QUERIES.labels(route, method).observe(db_queries)
    REQUEST_DB_SECONDS.labels(route, method).observe(db_seconds)
    if status == "409":
        CONFLICTS.labels(route, method, error_code or "unknown").inc()
    update_worker_gauges()


def observe_candidates(seconds, returned):
    """GET /allocation_candidates: the whole computation and its answer's size."""
    CANDIDATES_SECONDS.observe(seconds)
    CANDIDATES_RETURNED.observe(returned)


def observe_candidate_work(providers_scanned, limited):
    """The engine's work: providers whose facts it loaded; whether a cap stopped it."""
    CANDIDATES_PROVIDERS_SCANNED.observe(providers_scanned)
    CANDIDATES_GENERATION.labels("true" if limited else "false").inc()


def exposition():
    """The metrics in Prometheus text format, over every worker in multiprocess mode."""
    update_worker_gauges(force=True)
    if multiprocess_mode():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=settings.PROMETHEUS_MULTIPROC_DIR)
    else:
        registry = REGISTRY
    return generate_latest(registry)


def metrics_view(request):
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
