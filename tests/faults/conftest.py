"""The fault suite's servers (harness.py). It runs as its own step of .ci/run
(FAULT_SUITE=1 pytest tests/faults): it starts its own PostgreSQL and servers whatever
DATABASE_URL says, so the suite's SQLite and PostgreSQL passes skip it."""
import itertools
import os
import shutil
import subprocess
import sys

import pytest

from tests.faults.harness import ROOT, Database, Server
from tests.postgresql_server import server_binaries, work_directory

_names = itertools.count(1)


def pytest_collection_modifyitems(config, items):
    if os.environ.get("FAULT_SUITE") == "1":
        return
    skip = pytest.mark.skip(reason="the fault suite runs as its own step (FAULT_SUITE=1)")
    for item in items:
        if "tests/faults/" in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def database():
    database = Database(server_binaries(), work_directory("placement-faults-"))
    workdir = database.workdir
    database.start(first=True)
    database.query("CREATE DATABASE template_placement")
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("PG", "DATABASE_", "PLACEMENT_"))}
    environ.update(DATABASE_URL=database.url("template_placement"),
                   PLACEMENT_DATA_DIR=str(workdir / "placement-data"))
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env=environ, check=True)
    try:
        yield database
    finally:
        database.stop_quietly()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def fresh(database):
    """A database of its own for the test, copied from the migrated template."""
    name = f"faults_{next(_names)}"
    database.query(f"CREATE DATABASE {name} TEMPLATE template_placement")
    return name


@pytest.fixture
def serve(database, fresh):
    started = []

    def start(**options):
        server = Server(database.url(fresh), database.workdir, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
