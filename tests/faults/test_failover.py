"""PostgreSQL failover under claim load: a primary with a synchronous standby, the
service pointed at both with libpq's multi-host URL and target_session_attrs=read-write.
The primary dies (stop -m immediate), the standby is promoted, and the service writes on
without a restart; the ledger check then runs on the new primary: no claim a client was
told succeeded is missing (synchronous replication), none told failed is there.
"""
from tests.faults.harness import PORTS, Server, wait_for
from tests.faults.ledger import Load, check, make_providers, report
from tests.faults.test_faults import lost_commits
from tests.http import free_port
from tests.postgresql_server import PostgresServer, server_binaries


class Pair:
    """A primary copied from the suite's server (its migrated template included) and a
    synchronous standby of it, streaming."""

    def __init__(self, database):
        bindir = server_binaries("pg_basebackup")
        workdir = database.workdir
        self.primary = PostgresServer(bindir, workdir / "failover-primary",
                                      free_port(PORTS), workdir / "failover-primary.log")
        self._copy(database, self.primary, standby=False)
        with open(self.primary.data / "postgresql.auto.conf", "a") as conf:
            # every COMMIT waits until the standby has it
            conf.write("synchronous_standby_names = '*'\n")
        self.primary.start()
        # its port taken once the primary listens on its own
        self.standby = PostgresServer(bindir, workdir / "failover-standby",
                                      free_port(PORTS), workdir / "failover-standby.log")
        self._copy(self.primary, self.standby, standby=True)
        with open(self.standby.data / "postgresql.auto.conf", "a") as conf:
            # promoted, it has no standby of its own to wait for
            conf.write("synchronous_standby_names = ''\n")
        self.standby.start()
        wait_for(lambda: self.primary.query(
            "SELECT sync_state FROM pg_stat_replication")[0][0] == "sync",
            what="a synchronous standby")

    @staticmethod
    def _copy(source, target, standby):
        source.run(source.bindir / "pg_basebackup", "-h", "127.0.0.1", "-p", source.port,
                   "-U", "postgres", "-D", target.data, "-X", "stream", "-c", "fast",
                   *(["-R"] if standby else []))
        with open(target.data / "postgresql.auto.conf", "a") as conf:
            conf.write(f"port = {target.port}\n")

    def url(self, name):
        return (f"postgresql://postgres@127.0.0.1:{self.primary.port},"
                f"127.0.0.1:{self.standby.port}/{name}?target_session_attrs=read-write")

    def stop(self):
        for server in (getattr(self, "standby", None), self.primary):
            if server is not None:
                server.stop_quietly()


def test_a_promoted_standby_takes_over_the_writes(database):
    pair = Pair(database)
    try:
        name = "faults_failover"
        pair.primary.query(f"CREATE DATABASE {name} TEMPLATE template_placement")
        server = Server(pair.url(name), database.workdir)
        try:
            with Load(server, make_providers(server)) as load:
                load.run_for(2)
                pair.primary.stop("immediate")      # the primary is gone
                claims_before = load.answers["PUT", 204]
                pair.standby.pg_ctl("promote")
                wait_for(lambda: not pair.standby.query("SELECT pg_is_in_recovery()")[0][0],
                         what="the standby promoted")
                load.run_for(4)
            summary = check(load, pair.standby, name)
            assert load.answers["PUT", 204] > claims_before, \
                f"no claim succeeded after the promotion: {dict(load.answers)}"
            assert server.call("GET", "/resource_providers")[0] == 200
        finally:
            server.stop()
        report("primary lost, synchronous standby promoted", summary,
               claims_after_promotion=load.answers["PUT", 204] - claims_before,
               **lost_commits(server))
    finally:
        pair.stop()
