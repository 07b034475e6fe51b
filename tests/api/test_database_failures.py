"""What a database failure answers (foundation/db_faults.py), through the whole stack on
a real PostgreSQL: a lock waited for past lock_timeout is Placement's 409, a statement
past statement_timeout a 503 with Retry-After; neither shows the database's words."""
import psycopg2
import pytest
from django.db import connection

from tests.conftest import error_code, error_detail

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's timeouts"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def locked_traits():
    """Another session holds the traits table until the test ends."""
    params = connection.get_connection_params()
    other = psycopg2.connect(**{k: v for k, v in params.items() if k != "cursor_factory"})
    with other.cursor() as cursor:
        cursor.execute("LOCK TABLE traits IN ACCESS EXCLUSIVE MODE")
    yield
    other.rollback()
    other.close()


def session(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)


def test_a_lock_held_past_lock_timeout_is_a_conflict(api, locked_traits):
    session("SET lock_timeout = '200ms'")
    response = api.put("/traits/CUSTOM_WAITED")
    assert response.status_code == 409
    assert error_code(response) == "placement.concurrent_update"
    assert "nothing of this request was applied" in error_detail(response)
    assert "lock_timeout" not in error_detail(response)
    session("RESET lock_timeout")


def test_a_statement_past_statement_timeout_is_unavailable(api, locked_traits):
    session("SET lock_timeout = 0")
    session("SET statement_timeout = '200ms'")
    response = api.put("/traits/CUSTOM_WAITED")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "took too long; nothing of this request was applied" in error_detail(response)
    assert "canceling statement" not in error_detail(response)
    session("RESET statement_timeout")
    session("RESET lock_timeout")
