"""MariaDB under claim load: its server killed (kill -9) and restarted twice while 8
writers claim and delete. A COMMIT whose connection broke is looked up by the change
log's entry the write made (foundation/db_faults.py); the ledger check then holds: no
phantom, no lost claim, every error a clean 503. Needs MariaDB's server and root (its
data directory belongs to mysql), as tests/api/test_mysql_replica.py does.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.faults.harness import PORTS, ROOT, Server
from tests.faults.ledger import Load, check, make_providers, report
from tests.faults.test_faults import lost_commits
from tests.http import free_port
from tests.mariadb_server import MariaDBServer, why_not

NAME = "placement_faults"


class MariaDB(MariaDBServer):
    def query(self, sql, params=(), database=None):
        """The ledger check's way of asking (tests/faults/ledger.py)."""
        return self.sql(sql, params, database=database)


@pytest.fixture
def mariadb():
    reason = why_not()
    if reason:
        pytest.skip(reason)
    directory = Path(tempfile.mkdtemp(prefix="placement-faults-mariadb-"))
    os.chmod(directory, 0o755)
    # Every commit in the operating system's hands before it is acknowledged: a kill -9
    # then loses none (the suite's other servers write the log once a second, and lost
    # acknowledged DELETEs here, claims come back).
    server = MariaDB(directory / "db", free_port(PORTS),
                     settings="innodb_flush_log_at_trx_commit=2\n")
    try:
        server.install()
        server.start()
        server.sql("CREATE USER 'root'@'127.0.0.1'")   # root over TCP, no password
        server.sql("GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION")
        server.sql(f"CREATE DATABASE {NAME} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
        environ = {k: v for k, v in os.environ.items()
                   if not k.startswith(("DATABASE_", "PLACEMENT_"))}
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                       cwd=ROOT, check=True, timeout=600,
                       env={**environ, "DATABASE_URL": server.url(NAME),
                            "PLACEMENT_DATA_DIR": str(directory / "placement-data")})
        yield server, directory
    finally:
        server.kill()
        shutil.rmtree(directory, ignore_errors=True)


def test_mariadb_killed_and_restarted_under_writers(mariadb):
    server, directory = mariadb
    api = Server(server.url(NAME), directory)
    try:
        with Load(api, make_providers(api)) as load:
            for _ in range(2):
                load.run_for(2)
                server.kill()
                server.start()
            load.run_for(2)
        summary = check(load, server, NAME)
        assert load.answers["PUT", 503] > 0, "the outage was not seen"
        assert api.call("GET", "/resource_providers")[0] == 200
    finally:
        api.stop()
    report("MariaDB killed -9 and restarted x2", summary, **lost_commits(api))
