"""Every database session gets [placement_database] statement_timeout, lock_timeout and
idle_in_transaction_timeout (PostgreSQL from the connection's startup options,
MySQL/MariaDB from the backend), and waits at most round_trip_timeout for an answer
(tests/api/test_database_refusals.py shows a frozen server answered 503). The
upgrade check's connection budget on each database: tests/commands/test_status_and_sync.py."""
import math

import pytest
from django.db import connection

from foundation.mysql.base import time_limits

pytestmark = pytest.mark.django_db


def _one(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()


def test_the_session_has_the_configured_time_limits(settings):
    limits = settings.PLACEMENT_DB_TIME_LIMITS
    if connection.vendor == "postgresql":
        # in milliseconds, whatever unit SHOW would print them in
        assert _one("SELECT current_setting('lock_timeout')::interval")[0].total_seconds() \
            == limits["lock_timeout"]
        assert _one("SELECT current_setting('statement_timeout')::interval")[0] \
            .total_seconds() == limits["statement_timeout"]
        assert _one("SELECT current_setting('idle_in_transaction_session_timeout')"
                    "::interval")[0].total_seconds() == limits["idle_in_transaction_timeout"]
    elif connection.vendor == "mysql":
        lock_wait, = _one("SELECT @@innodb_lock_wait_timeout")
        assert lock_wait == limits["lock_timeout"]
        if connection.mysql_is_mariadb:
            assert float(_one("SELECT @@max_statement_time")[0]) == limits["statement_timeout"]
            assert _one("SELECT @@idle_transaction_timeout")[0] == \
                limits["idle_in_transaction_timeout"]
        raw = connection.connection
        if hasattr(raw, "_read_timeout"):   # PyMySQL
            assert raw._read_timeout == raw._write_timeout == \
                settings.PLACEMENT_DB_ROUND_TRIP_TIMEOUT
        else:   # mysqlclient keeps them in the C library: what it was given, whole seconds
            params = connection.get_connection_params()
            assert params["read_timeout"] == params["write_timeout"] == \
                math.ceil(settings.PLACEMENT_DB_ROUND_TRIP_TIMEOUT)
    else:
        pytest.skip("SQLite has no statement or lock time limits (a busy timeout)")


@pytest.mark.parametrize("mariadb, expected", [
    (True, ["SET SESSION max_statement_time = 30.0",
            "SET SESSION innodb_lock_wait_timeout = 3",
            "SET SESSION idle_transaction_timeout = 60"]),
    (False, ["SET SESSION max_execution_time = 30000",
             "SET SESSION innodb_lock_wait_timeout = 3"]),
])
def test_mysql_time_limits_per_server(mariadb, expected):
    assert time_limits(mariadb, statement_timeout=30, lock_timeout=2.5,
                       idle_in_transaction_timeout=60) == expected
    assert time_limits(mariadb, statement_timeout=0, lock_timeout=0,
                       idle_in_transaction_timeout=0) == []
