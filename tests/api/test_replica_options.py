"""The read-replica options of [placement_database] and their environment twins; the
route check that stops a start on an unknown replica route."""
import pytest

from foundation import config, db_routing

from placement_site import wsgi
from placement_site.settings import replica_from_url
from tests.api.test_configuration import write_conf

PRIMARY = "postgresql://placement@db1.example.com/placement"


def test_replica_options_come_from_the_file_and_the_environment(tmp_path):
    environ = write_conf(tmp_path, f"""
[placement_database]
connection = {PRIMARY}
slave_connection = postgresql://placement@db2.example.com/placement
replica_max_lag = 0.5
replica_read_routes = allocation_candidates
""")
    conf = config.load(environ).placement_database
    assert conf.slave_connection == ["postgresql://placement@db2.example.com/placement"]
    assert conf.replica_max_lag == 0.5
    assert conf.replica_read_routes == ["allocation_candidates"]
    conf = config.load({**environ,
                        "DATABASE_REPLICA_URLS": "postgresql://r1/p, postgresql://r2/p",
                        "DATABASE_REPLICA_MAX_LAG": "3",
                        "PLACEMENT_REPLICA_READ_ROUTES": "resource_providers"}
                       ).placement_database
    assert conf.slave_connection == ["postgresql://r1/p", "postgresql://r2/p"]
    assert conf.replica_max_lag == 3
    assert conf.replica_read_routes == ["resource_providers"]


def test_by_default_there_are_no_replicas_and_two_replica_routes():
    conf = config.load({}).placement_database
    assert conf.slave_connection == []
    assert conf.replica_read_routes == ["allocation_candidates", "resource_providers"]


@pytest.mark.parametrize("environ, message", [
    ({"DATABASE_REPLICA_URLS": "postgresql://r1/p"},
     "[placement_database] slave_connection: read replicas need a PostgreSQL or MySQL "
         "connection"),
    ({"DATABASE_URL": PRIMARY, "DATABASE_REPLICA_URLS": "sqlite:///copy.sqlite3"},
     "[placement_database] slave_connection: not a PostgreSQL URL: 'sqlite'"),
    ({"DATABASE_URL": PRIMARY, "DATABASE_REPLICA_MAX_LAG": "-1"},
     "DATABASE_REPLICA_MAX_LAG ([placement_database] replica_max_lag): "),
])
def test_bad_replica_options_name_the_option(environ, message):
    with pytest.raises(config.ConfigError) as caught:
        config.load(environ)
    assert message in str(caught.value)


def test_the_default_replica_routes_are_routes(settings):
    assert db_routing.unknown_replica_routes() == []
    settings.PLACEMENT_REPLICA_READ_ROUTES = ["/resource_providers/<str:uuid>/", "traits"]
    assert db_routing.unknown_replica_routes() == []


def test_an_unknown_replica_route_stops_the_start_with_one_line(settings, capsys):
    settings.PLACEMENT_REPLICA_READ_ROUTES = ["allocation_candidates", "allocation-candidates"]
    with pytest.raises(SystemExit):
        db_routing.check_at_start()
    assert capsys.readouterr().err == (
        "placement: configuration error: [placement_database] replica_read_routes: not a "
        "route template: allocation-candidates (e.g. allocation_candidates, "
        "resource_providers)\n")



def test_an_unknown_replica_route_stops_the_wsgi_application(settings, capsys):
    """What gunicorn loads checks the routes itself: without gunicorn_conf (no
    on_starting hook) a typo still stops the start."""
    settings.PLACEMENT_REPLICA_READ_ROUTES = ["resource_provider"]
    with pytest.raises(SystemExit) as stopped:
        wsgi.build_application()
    assert stopped.value.code == 4
    assert capsys.readouterr().err == (
        "placement: configuration error: [placement_database] replica_read_routes: not a "
        "route template: resource_provider (e.g. allocation_candidates, "
        "resource_providers)\n")
    settings.PLACEMENT_REPLICA_READ_ROUTES = ["resource_providers"]
    assert wsgi.build_application() is not None


@pytest.mark.parametrize("url", ["postgresql://placement@db2.example.com/placement",
                                 "mysql+pymysql://placement@db2.example.com/placement"])
def test_a_replica_gives_up_connecting_after_two_seconds_as_a_number(url):
    # A number for both drivers: PyMySQL compares it with numbers, so the string
    # libpq would take made every connection to a MySQL replica fail (a 500).
    assert replica_from_url(url)["OPTIONS"]["connect_timeout"] == 2
