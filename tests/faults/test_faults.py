"""Faults under claim load, each ending with the ledger check (ledger.check): no
over-capacity, no phantom and no lost claim, every error a clean JSON 4xx/503.

placement-api runs the production way (nginx + gunicorn, 2 workers x 4 threads) on a
private PostgreSQL; 8 claim/delete writers and 2 candidate readers run through each
fault. The numbers each test reports (pytest -s) are what clients were told.
"""
import os
import signal
import time

from tests.faults.harness import Database, wait_for
from tests.faults.ledger import Load, check, make_providers, report


def test_kill_workers(serve, database, fresh):
    """kill -9 of a worker mid-request: its clients are told the outcome is unknown
    (503), or see an answer it had begun cut off, never a replayed write's answer;
    gunicorn starts a new worker."""
    server = serve()
    with Load(server, make_providers(server), cut_off=True) as load:
        for _ in range(3):
            load.run_for(1.5)
            os.kill(server.worker_pids()[0], signal.SIGKILL)
        load.run_for(2)
    report("kill -9 worker x3", check(load, database, fresh))


def test_database_stopped_and_restarted(serve, database, fresh):
    """The database stopped for a few seconds, then restarted (-m immediate) twice:
    clean 503s while it is away, recovery without a restart of the service."""
    server = serve()
    with Load(server, make_providers(server)) as load:
        load.run_for(1.5)
        database.stop("fast")
        load.run_for(4)
        database.start()
        for _ in range(2):
            load.run_for(1.5)
            database.stop("immediate")
            database.start()
        load.run_for(2)
    summary = check(load, database, fresh)
    assert load.answers["PUT", 503] > 0, "the outage was not seen"
    assert server.call("GET", "/resource_providers")[0] == 200
    report("database stopped 4 s, restarted x2", summary, **lost_commits(server))


def lost_commits(server):
    """What the COMMITs whose connection broke turned out to be (the server's log)."""
    log = server.log_text()
    return {f"lost_commits_{outcome.replace(' ', '_')}": log.count(f"; it {outcome}")
            for outcome in ("was committed", "was not applied",
                            "may or may not have been applied")}


def test_locked_table_answers_conflict_within_the_lock_timeout(serve, database, fresh):
    """allocations locked beyond the lock timeout: claims are answered 409 and none is
    saved; /healthz answers all along, /readyz says why when no thread is free."""
    server = serve(DATABASE_LOCK_TIMEOUT=2)
    with Load(server, make_providers(server)) as load:
        load.run_for(1)
        holder = database.hold_lock(fresh, "allocations", 8)
        time.sleep(3)
        assert server.call("GET", "/healthz", timeout=10)[0] == 200
        status, _, document = server.call("GET", "/readyz", timeout=15)
        assert status in (200, 503) and document["status"] in ("ready", "not ready")
        holder.join()
        load.run_for(1.5)
    summary = check(load, database, fresh)
    assert load.answers["PUT", 409] > 0
    report("allocations locked 8 s, lock_timeout 2 s", summary)


def test_locked_table_beyond_the_front_door_timeout(serve, database, fresh):
    """No lock, statement or round trip timeout, and the lock held past the front
    door's: clients are told 504, and none of those writes is committed once the lock
    goes."""
    server = serve(DATABASE_LOCK_TIMEOUT=0, DATABASE_STATEMENT_TIMEOUT=0,
                   DATABASE_ROUND_TRIP_TIMEOUT=0, PLACEMENT_REQUEST_TIMEOUT=10)
    with Load(server, make_providers(server), allowed=(503, 504)) as load:
        load.run_for(1)
        holder = database.hold_lock(fresh, "allocations", 14)
        time.sleep(2)
        assert server.call("GET", "/healthz", timeout=5)[0] == 200
        holder.join()
        load.run_for(2)
    summary = check(load, database, fresh)
    assert load.told_timed_out, "no write waited past the front door's timeout"
    saved = {row[0] for row in database.query(
        "SELECT c.uuid FROM consumers c JOIN allocations a ON a.consumer_id = c.id",
        database=fresh)}
    assert not saved & set(load.told_timed_out), "a write told 504 was committed later"
    report("allocations locked 14 s, front door 10 s", summary,
           told_504=len(load.told_timed_out))


def test_connection_storm_and_recovery(serve, database, fresh):
    """More threads than the database takes (max_connections 30, 2 x 16 threads, a pool
    as large as the threads): the excess is a clean 503; once the load stops, idle
    connections are closed and another node gets in without a restart."""
    server = serve(threads=16, DATABASE_MAX_POOL_SIZE=16, DATABASE_CONN_MAX_IDLE=1)
    blockers = _occupy(database, fresh, 8)
    try:
        with Load(server, make_providers(server), writers=40, readers=20) as load:
            load.run_for(6)
    finally:
        for conn in blockers:
            conn.close()
    summary = check(load, database, fresh)
    wait_for(lambda: database.sessions(fresh) == 0, timeout=20, what="idle connections closed")
    other = serve(workers=1)
    assert all(other.call("GET", "/resource_providers")[0] == 200 for _ in range(8))
    report("storm, 60 clients, 2 x 16 threads, max_connections 30", summary)


def test_connection_storm_bounded_pool(serve, database, fresh):
    """The same storm with the default pool (5 a process): no worker ever holds more
    than 5 connections, and requests wait for one instead of failing."""
    server = serve(threads=16)
    peak = 0
    with Load(server, make_providers(server), writers=40, readers=20) as load:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            peak = max(peak, *server.database_connections(database.port).values())
            time.sleep(0.05)
    summary = check(load, database, fresh)
    assert 0 < peak <= 5, f"a worker held {peak} connections"
    assert not any(status == 503 for (_, status) in load.answers), load.answers
    report("storm, default pool", summary, peak_sessions=peak)


def test_reloads_drop_nothing(serve, database, fresh):
    """SIGHUP x4 under load: every request answered, none with an error of the reload."""
    server = serve()
    with Load(server, make_providers(server)) as load:
        for _ in range(4):
            load.run_for(1.5)
            server.reload()
        load.run_for(3)
    summary = check(load, database, fresh)
    assert not any(status is None or status >= 500 for (_, status) in load.answers), \
        load.answers
    report("SIGHUP x4", summary)


def _occupy(database: Database, name, count):
    """Sessions another client holds, so that the service meets the database's limit."""
    import psycopg2

    return [psycopg2.connect(host="127.0.0.1", port=database.port, user="postgres",
                             dbname=name) for _ in range(count)]


def test_stop_answers_the_requests_in_flight(serve, database, fresh):
    """SIGTERM while claims wait on a lock: placement-api stops only after answering
    them (nginx first, gracefully, then gunicorn), and every claim answered 204 is saved."""
    import threading

    server = serve()
    providers = make_providers(server)
    holder = database.hold_lock(fresh, "allocations", 3)
    answers = []

    def claim(consumer):
        answers.append((consumer, server.call("PUT", f"/allocations/{consumer}", {
            "allocations": {providers[0]: {"resources": {"VCPU": 1}}},
            "project_id": fresh, "user_id": fresh, "consumer_generation": None})[0]))

    import uuid
    claims = [threading.Thread(target=claim, args=(str(uuid.uuid4()),)) for _ in range(6)]
    for thread in claims:
        thread.start()
    time.sleep(1)
    server.process.send_signal(signal.SIGTERM)
    holder.join()
    for thread in claims:
        thread.join(60)
    assert server.process.wait(60) == 0
    assert sorted(status for _, status in answers) == [204] * 6, answers
    saved = {row[0] for row in database.query(
        "SELECT c.uuid FROM consumers c JOIN allocations a ON a.consumer_id = c.id",
        database=fresh)}
    assert saved == {consumer for consumer, _ in answers}
    report("SIGTERM with 6 claims in flight", {"answers": sorted(s for _, s in answers)})


def test_a_frozen_database_costs_the_round_trip_timeout(serve, database, fresh):
    """Every PostgreSQL process stopped (SIGSTOP) for 8 s under claim load, with
    round_trip_timeout 2 s: requests are answered 503 while it is still frozen (a COMMIT
    caught in it: looked up, "may or may not" when the lookup cannot reach it either),
    then the service recovers; the ledger holds."""
    server = serve(DATABASE_ROUND_TRIP_TIMEOUT=2, DATABASE_OUTCOME_LOOKUP_TIMEOUT=1)
    with Load(server, make_providers(server)) as load:
        load.run_for(1.5)
        processes = database.processes()
        before = load.answers["PUT", 503] + load.answers["GET", 503]
        thaw = time.monotonic() + 8
        for pid in processes:
            os.kill(pid, signal.SIGSTOP)
        try:
            wait_for(lambda: load.answers["PUT", 503] + load.answers["GET", 503] > before,
                     timeout=7, what="an answer while frozen")
            answered_while_frozen = True
        except TimeoutError:
            answered_while_frozen = False
        finally:
            time.sleep(max(0, thaw - time.monotonic()))
            for pid in processes:
                os.kill(pid, signal.SIGCONT)
        load.run_for(3)
    summary = check(load, database, fresh)
    assert answered_while_frozen, f"no 503 while the database was frozen: {load.answers}"
    report("database frozen 8 s, round_trip_timeout 2 s", summary, **lost_commits(server))
