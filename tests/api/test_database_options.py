"""PostgreSQL connections run without JIT compilation unless the URL's `options` say
otherwise: the planner otherwise compiles any statement it costs above jit_above_cost,
10-12 ms spent on queries that run in a few."""
import pytest
from django.db import connection

from placement_site.settings import database_from_url


def test_postgresql_connections_turn_jit_off_by_default():
    database = database_from_url("postgresql://placement@db1.example.com/placement")
    assert database["OPTIONS"]["options"] == "-c jit=off"


def test_options_in_the_url_replace_the_default():
    database = database_from_url(
        "postgresql://placement@db1/placement?options=-c%20work_mem%3D8MB&sslmode=require")
    assert database["OPTIONS"] == {"options": "-c work_mem=8MB", "sslmode": "require"}


def test_sqlite_gets_no_postgresql_options():
    assert "options" not in database_from_url("sqlite:///tmp/x.sqlite3")["OPTIONS"]


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL setting")
def test_the_service_connection_runs_without_jit():
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)
