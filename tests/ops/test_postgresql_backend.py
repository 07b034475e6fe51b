"""foundation.postgresql: a kept connection is checked before a request's first query
without sending the server anything, and one the server closed is replaced."""
import time

import pytest
from django.db import connection
from psycopg2 import errors

pytestmark = pytest.mark.django_db


@pytest.fixture
def kept():
    """A second connection to the test database, as a worker keeps one between requests."""
    if connection.vendor != "postgresql":
        pytest.skip("the PostgreSQL backend's own check")
    other = connection.copy()
    other.ensure_connection()
    yield other
    other.close()


def _last_statement(pid):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")   # read the activity afresh
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone()[0]


def test_an_idle_connection_is_usable_and_the_check_sends_nothing(kept):
    with kept.cursor() as cursor:
        cursor.execute("SELECT 'the last statement'")
    assert kept.is_usable()
    assert kept.is_usable()
    assert _last_statement(kept.connection.info.backend_pid) == "SELECT 'the last statement'"


def test_a_connection_the_server_closed_is_replaced_before_the_next_query(kept):
    pid = kept.connection.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    deadline = time.monotonic() + 10
    while kept.is_usable():
        assert time.monotonic() < deadline, "a closed connection still counts as usable"
        time.sleep(0.05)
    kept.health_check_done = False   # as at the start of a next request
    with kept.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid


def test_a_connection_in_a_failed_transaction_is_not_usable(kept):
    raw = kept.connection
    raw.autocommit = False
    with raw.cursor() as cursor, pytest.raises(errors.DivisionByZero):
        cursor.execute("SELECT 1 / 0")
    assert not kept.is_usable()
    raw.rollback()
    assert kept.is_usable()
