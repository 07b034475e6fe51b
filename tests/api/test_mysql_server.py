"""The MySQL/MariaDB server as found at start (foundation/mysql/checks.py) and as a
replica candidate (foundation/db_routing.py): asked of the suite's real server."""
import pytest
from django.db import connection

from foundation import db_routing
from foundation.mysql import checks

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "mysql", reason="MySQL's checks")]


def test_the_suites_server_is_fit():
    with connection.cursor() as cursor:
        assert checks.problems(cursor) == []


def test_a_session_that_is_not_strict_is_found():
    with connection.cursor() as cursor:
        cursor.execute("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'")
        try:
            found = checks.problems(cursor)
        finally:
            cursor.execute("SET SESSION sql_mode = 'TRADITIONAL,ONLY_FULL_GROUP_BY'")
    assert len(found) == 1 and "sql_mode is not strict" in found[0]


def test_a_table_in_another_engine_is_found():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE engine_check (id int) ENGINE=MyISAM")   # commits
        try:
            found = checks.problems(cursor)
        finally:
            cursor.execute("DROP TABLE engine_check")
    assert found == ["tables not in InnoDB: engine_check (MyISAM)"]


def test_a_server_that_is_no_replica_is_not_used_as_one():
    with connection.cursor() as cursor:
        assert db_routing._mysql_health(cursor) == (False, False, None)
