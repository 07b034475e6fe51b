"""foundation/db_routing.py with a replica alias configured: where a request's reads
go, and how often a replica's health is asked. tests/scaling proves the same with a real
streaming standby, tests/api/test_mysql_replica.py with a real MariaDB replica; here the
"replica" is a second connection to the test database."""
import time
import uuid

import pytest
from django.db import connection, connections, transaction
from django.http import HttpResponse
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from prometheus_client import REGISTRY

from foundation import db_routing
from providers.models import ResourceProvider, Trait
from tests.conftest import PlacementClient

pytestmark = [
    # The primary must not be inside the test's own transaction: reads inside
    # transaction.atomic() always go to the primary, which is what is tested.
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql",
                       reason="the PostgreSQL pass: the probe asked here is PostgreSQL's "
                              "(recovery functions); MySQL replicas are tested with a real "
                              "one in tests/api/test_mysql_replica.py"),
]
REPLICA = "replica1"


@pytest.fixture
def replica():
    """The alias settings.py makes of a slave_connection URL, here a second connection
    to the primary's (test) database."""
    connections.settings[REPLICA] = {**connections["default"].settings_dict,
                                     "TEST": {"MIRROR": "default"}}
    db_routing._health.clear()
    # Opened here: Django's test case refuses to open connections of aliases it did not
    # know when it started (ensure_connection), and an open one is kept by requests.
    connections[REPLICA].connect()
    try:
        yield connections[REPLICA]
    finally:
        connections[REPLICA].close()
        del connections[REPLICA]
        del connections.settings[REPLICA]
        db_routing._health.clear()


def queried(step):
    """The aliases that ran queries during step()."""
    with CaptureQueriesContext(connections["default"]) as primary, \
            CaptureQueriesContext(connections[REPLICA]) as standby:
        step()
    return {alias for alias, captured in (("default", primary), (REPLICA, standby))
            if captured.captured_queries}


def test_a_routed_get_reads_the_replica_until_it_writes_and_never_inside_atomic(replica):
    # The probe would rightly find this "replica" (the primary itself) not a standby;
    # where reads go once a replica is judged usable is what this test is about, so it
    # starts with that judgement fresh in the health cache (tests/scaling probes a real
    # standby).
    db_routing._health[REPLICA] = (time.monotonic(), True, "")
    seen = {}

    def view(request):
        count = ResourceProvider.objects.count
        seen["read"] = queried(count)
        with transaction.atomic():
            seen["read inside atomic"] = queried(count)
        seen["read after atomic"] = queried(count)
        seen["write"] = queried(
            lambda: Trait.objects.create(name=f"CUSTOM_ROUTED_{uuid.uuid4().hex.upper()}"))
        seen["read after the write"] = queried(count)
        seen["read after the write, by uuid"] = queried(
            lambda: list(ResourceProvider.objects.filter(uuid="x")))
        return HttpResponse()

    middleware = db_routing.ReplicaReadMiddleware(view)
    assert middleware(RequestFactory().get("/resource_providers")).status_code == 200
    assert seen == {"read": {REPLICA}, "read inside atomic": {"default"},
                    "read after atomic": {REPLICA}, "write": {"default"},
                    "read after the write": {"default"},
                    "read after the write, by uuid": {"default"}}
    # the next request starts afresh; a route that is not a replica route reads the primary
    assert middleware(RequestFactory().get("/resource_providers")).status_code == 200
    assert seen["read"] == {REPLICA}
    assert seen["read after the write"] == {"default"}
    seen.clear()
    middleware(RequestFactory().get("/traits"))
    assert seen["read"] == {"default"} and seen["read after atomic"] == {"default"}
    assert db_routing.read_alias() == "default"  # outside any request


def test_a_replica_connection_closed_under_us_is_down_not_an_error(replica):
    # What pgbouncer does to a waiting client when the standby has stopped: the wrapper
    # still holds the connection, the driver knows it closed (InterfaceError).
    replica.connection.close()
    usable, reason = db_routing._probe(REPLICA)
    assert not usable and reason.startswith("down (connection already closed")
    assert replica.connection is None  # dropped: the next probe connects anew


def test_the_replica_health_is_asked_at_most_once_a_second(replica):
    api = PlacementClient()
    fallbacks = REGISTRY.get_sample_value("placement_replica_fallbacks_total")
    with CaptureQueriesContext(replica) as standby:
        started = time.monotonic()
        for _ in range(10):
            assert api.get("/resource_providers").status_code == 200
        elapsed = time.monotonic() - started
        probes = sum(db_routing.HEALTH_SQL in q["sql"] for q in standby.captured_queries)
        # Once for the 10 requests; on a machine too loaded to answer them within a
        # second, at most once per second.
        assert 1 <= probes <= 1 + int(elapsed // db_routing.HEALTH_TTL), (probes, elapsed)
        if elapsed < db_routing.HEALTH_TTL:
            assert probes == 1
        # Not a standby: each of the 10 routed requests was answered by the primary.
        assert db_routing.replica_status() == {REPLICA: (False, "not a standby (promoted?)")}
        assert REGISTRY.get_sample_value("placement_replica_fallbacks_total") == \
            fallbacks + 10
        time.sleep(db_routing.HEALTH_TTL)
        assert api.get("/resource_providers").status_code == 200
        assert sum(db_routing.HEALTH_SQL in q["sql"]
                   for q in standby.captured_queries) == probes + 1

