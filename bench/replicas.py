"""Candidates throughput with 0 and 1 read replicas, and the lag fallback at work.

Usage (a primary in DATABASE_URL, its streaming hot standby in DATABASE_REPLICA_URLS)::

    python -m bench replicas [--seconds 5] [--clients 4] [--load 500]

* ``--load N`` first loads N flat compute nodes (bench/cloud.py's flat shape, into an
  empty providers table) and waits until the replica has them.
* Three runs of GET /allocation_candidates (the perf kit's flat query), each
  ``--clients`` threads in-process for ``--seconds``: "0 replicas" (the replica routes
  switched off: the primary answers), "1 replica" (the router sends candidates to the
  first replica), and "lagging replica": replay paused on the replica (it needs a
  superuser there, as pg_wal_replay_pause does) and a commit on the primary, so that the
  replica falls past [placement_database] replica_max_lag; every answer must then come
  from the primary with no error. Replay is resumed at the end, whatever happens.

A table of requests/s, median latency, errors and where reads went is printed.
"""
import statistics
import threading
import time

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.test import Client
from django.test.utils import override_settings

from bench import BenchError, cloud
from foundation import db_routing
from providers.models import ResourceProvider

HELP = "candidates throughput with 0 and 1 read replicas, and with a lagging replica"
HEADERS = {"HTTP_X_AUTH_TOKEN": "admin", "HTTP_OPENSTACK_API_VERSION": "placement latest"}


def add_arguments(parser):
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--load", type=int, default=0, metavar="N")


def run(options, out):
    seconds, clients, load = options.seconds, options.clients, options.load
    if seconds <= 0 or clients < 1 or load < 0:
        raise BenchError("--seconds must be > 0, --clients >= 1, --load >= 0")
    replicas = db_routing.replica_aliases()
    if not replicas:
        raise BenchError("no replica configured: set DATABASE_REPLICA_URLS "
                         "([placement_database] slave_connection)")
    replica = replicas[0]
    if "allocation_candidates" not in db_routing.replica_routes():
        raise BenchError("allocation_candidates is not in replica_read_routes")
    if load:
        if ResourceProvider.objects.exists():
            raise BenchError("providers exist: --load needs an empty providers table")
        cloud.build(cloud.flat(load))
    wait_caught_up(replica)
    query = "/allocation_candidates?" + cloud.QUERIES["flat"] + "&limit=50"
    rows = []
    with override_settings(PLACEMENT_REPLICA_READ_ROUTES=[]):
        rows.append(("0 replicas", *measure(query, clients, seconds), "primary"))
    if not db_routing.replica_usable(replica, force=True):
        raise BenchError(f"{replica} is not usable: {db_routing.replica_status()[replica][1]}")
    rows.append(("1 replica", *measure(query, clients, seconds), replica))
    with replay_paused(replica):
        time.sleep(settings.PLACEMENT_REPLICA_MAX_LAG + db_routing.HEALTH_TTL + 0.5)
        usable = db_routing.replica_usable(replica, force=True)
        reason = db_routing.replica_status()[replica][1]
        rows.append(("lagging replica", *measure(query, clients, seconds),
                     replica if usable else f"primary ({reason})"))
    out.write(f"{'run':16} {'req/s':>8} {'median ms':>10} {'errors':>7}  reads\n")
    for name, rate, median, errors, where in rows:
        out.write(f"{name:16} {rate:8.1f} {median:10.1f} {errors:7d}  {where}\n")
    if rows[-1][3] or rows[-1][4] == replica:
        raise BenchError("the lagging replica was not skipped cleanly")


def measure(path, clients, seconds):
    """(requests/s, median ms, errors) of `clients` threads asking for `seconds`."""
    latencies, errors = [], []
    deadline = time.monotonic() + seconds

    def client_loop():
        client, mine, failed = Client(), [], 0
        try:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                response = client.get(path, **HEADERS)
                mine.append((time.perf_counter() - started) * 1000)
                failed += response.status_code != 200
        finally:
            connections.close_all()
        latencies.extend(mine)
        errors.append(failed)

    threads = [threading.Thread(target=client_loop) for _ in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return len(latencies) / elapsed, statistics.median(latencies or [0]), sum(errors)


def wait_caught_up(replica, timeout=60):
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        target = cursor.fetchone()[0]
    deadline = time.monotonic() + timeout
    with connections[replica].cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [target])
            if cursor.fetchone()[0]:
                return
            if time.monotonic() > deadline:
                raise BenchError(f"{replica} did not catch up within {timeout} s")
            time.sleep(0.1)


class replay_paused:
    """Pause replay on the replica and commit on the primary: the replica lags."""

    def __init__(self, replica):
        self.replica = replica

    def __enter__(self):
        try:
            with connections[self.replica].cursor() as cursor:
                cursor.execute("SELECT pg_wal_replay_pause()")
        except DatabaseError as exc:
            raise BenchError(f"cannot pause replay on {self.replica}: "
                             f"{' '.join(str(exc).split())}")
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT txid_current()")  # a commit the replica will not replay

    def __exit__(self, *exc_info):
        with connections[self.replica].cursor() as cursor:
            cursor.execute("SELECT pg_wal_replay_resume()")
        wait_caught_up(self.replica)
