"""foundation.db_retry: a transaction the database refuses for a concurrent one is
started over whole; a lost connection is not; after the last attempt, Placement's 409."""
import threading

import pymysql
import pytest
from django.db import OperationalError, connection, connections

from foundation import db_retry
from foundation.domain_errors import ConcurrentUpdate


def wrapped(driver_error):
    """A driver error as Django hands it on (its own class, the driver's as the cause)."""
    error = OperationalError(*driver_error.args)
    error.__cause__ = driver_error
    return error


@pytest.mark.parametrize("code, retried", [
    (1213, True), (3101, True),                 # deadlock/certification, GR at COMMIT
    (1205, False),   # a lock wait past lock_timeout: answered 409 at the edge, not redone
    (2013, False), (2006, False), (2003, False),  # lost, gone away, refused: the edge's
    (1146, False),                                # a missing table: a bug, not a race
])
def test_which_mysql_errors_start_the_transaction_over(code, retried):
    assert db_retry.is_retryable(wrapped(pymysql.err.OperationalError(code, "x"))) is retried


@pytest.mark.django_db(transaction=True)
def test_after_the_last_refusal_the_answer_is_a_concurrent_update():
    calls = []

    def always_refused():
        calls.append(1)
        raise wrapped(pymysql.err.OperationalError(1213, "Deadlock found"))

    with pytest.raises(ConcurrentUpdate) as raised:
        db_retry.run(always_refused, attempts=3)
    assert len(calls) == 3 and raised.value.code == "placement.concurrent_update"


@pytest.mark.django_db(transaction=True)
def test_a_lost_connection_is_raised_at_once():
    calls = []

    def lost():
        calls.append(1)
        raise wrapped(pymysql.err.OperationalError(2013, "Lost connection"))

    with pytest.raises(OperationalError):
        db_retry.run(lost)
    assert calls == [1]


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor == "sqlite", reason="SQLite serialises writers")
def test_a_real_deadlock_loses_one_attempt_and_both_writes_land():
    """Two transactions take the tree guard and the topology token in opposite orders:
    the database refuses one; started over, it commits after the other."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT writes FROM tree_guard WHERE id = 1")
        before = cursor.fetchone()[0]
    both_hold_one = threading.Barrier(2, timeout=30)
    attempts, errors = [], []
    first, second = ("UPDATE tree_guard SET writes = writes + 1 WHERE id = 1",
                     "UPDATE topology_token SET token = 'deadlock-test' WHERE id = 1")

    def writer(order):
        def work():
            attempts.append(order)
            with connection.cursor() as cursor:
                cursor.execute(order[0])
                if attempts.count(order) == 1:
                    both_hold_one.wait()
                cursor.execute(order[1])
        try:
            db_retry.run(work)
        except Exception as exc:   # reported below, in the test's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(order,))
               for order in ((first, second), (second, first))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert len(attempts) == 3   # one of the two was refused once, then committed
    with connection.cursor() as cursor:
        cursor.execute("SELECT writes FROM tree_guard WHERE id = 1")
        assert cursor.fetchone()[0] == before + 2



@pytest.mark.parametrize("code, kind", [(1213, "lock timeout"), (1205, "lock timeout"),
                                        (2013, "unavailable"), (1969, "timed out")])
def test_a_mysql_failure_no_retry_took_is_answered_as_its_kind_at_the_edge(code, kind):
    from foundation import db_faults

    assert db_faults.kind(wrapped(pymysql.err.OperationalError(code, "x"))) == kind
