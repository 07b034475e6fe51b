"""Every way the database refuses is a clean 503 with Retry-After (a lock wait: 409 for a
write), on both families: the table below lists each error code, where it arrives and
the answer. Each is injected on the wire by a proxy in front of the suite's database
(tests/db_proxy.py), so the real driver reads it and the whole stack answers it; the
database's own words never reach the client. Run in the PostgreSQL and MariaDB passes.
"""
import pytest
from django.db import connection

from tests.conftest import error_code, error_detail
from tests.db_proxy import Proxy

pytestmark = [
    pytest.mark.skipif(connection.vendor not in ("postgresql", "mysql"),
                       reason="a database server's refusals (PostgreSQL, MariaDB/MySQL)"),
    pytest.mark.django_db(transaction=True),
]

UNAVAILABLE = (503, "The database is unavailable; please retry.")
TIMED_OUT = (503, "The database took too long; nothing of this request was applied. "
                  "Please retry.")
LOCKED = (409, "Another update held a lock too long; nothing of this request was "
               "applied. Please retry.")

# code, what it means, where it arrives (connect, a read, a write), the answer
MYSQL = [
    (1040, "too many connections", "connect", UNAVAILABLE),
    (1203, "the user's max_user_connections", "connect", UNAVAILABLE),
    (1045, "access denied", "connect", UNAVAILABLE),
    (1053, "server shutdown in progress", "read", UNAVAILABLE),
    (1927, "connection killed", "read", UNAVAILABLE),
    (4031, "disconnected for inactivity", "read", UNAVAILABLE),
    (2006, "server has gone away", "read", UNAVAILABLE),
    (2013, "lost connection during query", "read", UNAVAILABLE),
    (1047, "Galera node not ready", "read", UNAVAILABLE),
    (1041, "out of memory", "read", UNAVAILABLE),
    (1290, "read-only (read_only)", "write", UNAVAILABLE),
    (1836, "read-only mode", "write", UNAVAILABLE),
    (1021, "disk full", "write", UNAVAILABLE),
    (1114, "table full", "write", UNAVAILABLE),
    (1969, "max_statement_time", "read", TIMED_OUT),
    (1205, "lock wait timeout", "write", LOCKED),
]
POSTGRESQL = [
    ("53300", "too many connections", "connect", UNAVAILABLE),
    ("57P03", "the server is starting up", "connect", UNAVAILABLE),
    ("28P01", "password authentication failed", "connect", UNAVAILABLE),
    ("57P01", "terminating connection: administrator command (shutdown)", "read",
     UNAVAILABLE),
    ("57P02", "crash shutdown", "read", UNAVAILABLE),
    ("08006", "connection failure", "read", UNAVAILABLE),
    ("25P03", "idle-in-transaction timeout", "read", UNAVAILABLE),
    ("53200", "out of memory", "read", UNAVAILABLE),
    ("25006", "read-only transaction (a standby)", "write", UNAVAILABLE),
    ("53100", "disk full", "write", UNAVAILABLE),
    ("58030", "I/O error", "write", UNAVAILABLE),
    ("57014", "statement_timeout", "read", TIMED_OUT),
    ("55P03", "lock_timeout", "write", LOCKED),
]
TABLE = MYSQL if connection.vendor == "mysql" else POSTGRESQL


@pytest.fixture
def proxy():
    """The service's connections go through a proxy for the test."""
    database = connection.settings_dict
    saved = database["HOST"], database["PORT"]
    default_port = 3306 if connection.vendor == "mysql" else 5432
    between = Proxy(connection.vendor, database["HOST"] or "127.0.0.1",
                    int(database["PORT"] or default_port))
    connection.close()
    database["HOST"], database["PORT"] = "127.0.0.1", str(between.port)
    try:
        yield between
    finally:
        connection.close()
        database["HOST"], database["PORT"] = saved
        between.close()


def assert_answer(response, expected):
    status, detail = expected
    assert response.status_code == status, response.content
    assert detail in error_detail(response)
    if status == 503:
        assert response["Retry-After"] == "5"
    else:
        assert error_code(response) == "placement.concurrent_update"
    assert "proxy" not in response.content.decode()


def connected():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


@pytest.mark.parametrize("code, meaning, where, expected", TABLE,
                         ids=[f"{row[0]}-{row[2]}" for row in TABLE])
def test_each_refusal_has_its_answer(api, proxy, code, meaning, where, expected):
    if where == "connect":
        connection.close()
        proxy.refuse(code)
        response = api.get("/resource_providers")
    elif where == "read":
        connected()
        proxy.fail(b"resource_providers", code)
        response = api.get("/resource_providers")
    else:
        connected()
        proxy.fail(b"INSERT", code)
        response = api.put("/traits/CUSTOM_REFUSED")
    assert_answer(response, expected)
    # the next request is served as usual, and a refused write was not applied (the test
    # client keeps a broken connection where a served request's end would close it)
    connection.close()
    after = api.get("/traits?name=in:CUSTOM_REFUSED")
    assert (after.status_code, after.json().get("traits")) == (200, []), after.content


def test_nothing_listening_is_unavailable(api, proxy):
    """Can't connect (MySQL 2003; PostgreSQL: no SQLSTATE)."""
    connection.close()
    proxy.stop_listening()
    assert_answer(api.get("/resource_providers"), UNAVAILABLE)
    proxy.listen()
    assert api.get("/resource_providers").status_code == 200


def test_a_frozen_server_costs_at_most_the_round_trip_timeout(api, proxy, settings):
    """The server stops answering (its answers are held for 20 s): the request is
    answered 503 once round_trip_timeout (1 s here) has passed, not after the freeze.
    Without the limit it would be answered 200 when the freeze ends."""
    settings.PLACEMENT_DB_ROUND_TRIP_TIMEOUT = 1
    connection.close()   # the limit is taken when connecting (MySQL)
    connected()
    proxy.freeze(20, on_commit=False)
    assert_answer(api.get("/resource_providers"), UNAVAILABLE)


def test_connecting_to_a_frozen_server_costs_at_most_the_connect_timeout(
        api, proxy, settings, monkeypatch):
    """A new connection to a server that answers nothing (its greeting held for 20 s) is
    given up after the connect timeout (MySQL: 10 s unless the URL says otherwise, 1 s
    here; mysqlclient's C library would wait for ever; PostgreSQL: round_trip_timeout),
    and answered 503, not when the freeze ends."""
    settings.PLACEMENT_DB_ROUND_TRIP_TIMEOUT = 1
    if connection.vendor == "mysql":
        from foundation.mysql import base
        monkeypatch.setattr(base, "CONNECT_TIMEOUT", 1, raising=False)
        monkeypatch.delitem(connection.settings_dict["OPTIONS"], "connect_timeout",
                            raising=False)
    connection.close()
    proxy.freeze(20, on_commit=False)
    assert_answer(api.get("/resource_providers"), UNAVAILABLE)
