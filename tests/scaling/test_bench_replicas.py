"""python -m bench replicas against the real primary and streaming standby: it times the
three runs and sees the lagging standby skipped (a smoke test: no figure is asserted).

It lives here, not in tests/bench/, because it needs this directory's cluster."""
import subprocess
import sys

from tests.scaling.conftest import ROOT, server_environ


def test_reads_from_the_standby_and_falls_back_when_it_lags(cluster):
    environ = server_environ(cluster.url("primary"), cluster.workdir,
                             DATABASE_REPLICA_URLS=cluster.url("standby"),
                             DATABASE_REPLICA_MAX_LAG=0.5,
                             PLACEMENT_REPLICA_READ_ROUTES="allocation_candidates")
    done = subprocess.run([sys.executable, "-m", "bench", "replicas", "--seconds", "0.3",
                           "--clients", "2"], cwd=ROOT, env=environ, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {line[:16].rstrip(): line[16:].split() for line in done.stdout.splitlines()[1:]}
    assert list(rows) == ["0 replicas", "1 replica", "lagging replica"]
    assert all(columns[2] == "0" for columns in rows.values())   # no errors
    assert rows["0 replicas"][3] == "primary"
    assert rows["1 replica"][3].startswith("replica")
    assert rows["lagging replica"][3] == "primary", done.stdout   # (and the reason)
