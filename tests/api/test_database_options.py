"""PostgreSQL connections run without JIT compilation unless the URL's `options` say
otherwise: the planner otherwise compiles any statement it costs above jit_above_cost,
10-12 ms spent on queries that run in a few."""
import pytest
from django.db import connection

from placement_site.settings import database_from_url


def test_postgresql_connections_turn_jit_off_by_default():
    database = database_from_url("postgresql://placement@db1.example.com/placement")
    # and the statement, lock and idle-in-transaction timeouts of [placement_database]
    # (30 s, 10 s, 60 s)
    assert database["OPTIONS"]["options"] == (
        "-c jit=off -c statement_timeout=30000 -c lock_timeout=10000 "
        "-c idle_in_transaction_session_timeout=60000")


def test_options_in_the_url_replace_the_default():
    database = database_from_url(
        "postgresql://placement@db1/placement?options=-c%20work_mem%3D8MB&sslmode=require")
    assert database["OPTIONS"] == {
        "options": "-c work_mem=8MB -c statement_timeout=30000 -c lock_timeout=10000 "
                   "-c idle_in_transaction_session_timeout=60000",
        "sslmode": "require"}


def test_timeouts_in_the_url_are_kept():
    database = database_from_url(
        "postgresql://placement@db1/placement?options=-c%20lock_timeout%3D500")
    assert database["OPTIONS"]["options"] == (
        "-c lock_timeout=500 -c statement_timeout=30000 "
        "-c idle_in_transaction_session_timeout=60000")


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL setting")
def test_the_service_connection_has_the_time_limits():
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('statement_timeout'), "
                       "current_setting('lock_timeout'), "
                       "current_setting('idle_in_transaction_session_timeout')")
        assert cursor.fetchone() == ("30s", "10s", "1min")


def test_sqlite_gets_no_postgresql_options():
    assert "options" not in database_from_url("sqlite:///tmp/x.sqlite3")["OPTIONS"]


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL setting")
def test_the_service_connection_runs_without_jit():
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)
