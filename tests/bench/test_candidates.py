"""python -m bench candidates loads the perf shapes and times the canonical queries.

Smoke tests only: speed targets live in the benchmark's figures, never in assertions."""
import pytest

from bench import BenchError
from bench import candidates as candidates_benchmark


def _rows(output):
    """{(shape, size, query): (candidates, statements)} from the printed table."""
    rows = {}
    for line in output.splitlines():
        if line.startswith(("flat ", "nested ")):
            parts = line.replace("no limit", "no-limit").split()
            rows[(parts[0], int(parts[1]), parts[2])] = (parts[3], parts[4])
    return rows


@pytest.fixture(autouse=True)
def settled_at_once(settings):
    """No wait for the topology to settle (inside the test's transaction the snapshot is
    not used anyway)."""
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0


@pytest.mark.django_db
def test_loads_both_shapes_and_prints_a_table(bench):
    rows = _rows(bench("candidates", "--shape", "both", "--count", 4, "--reps", 1, "--wipe"))
    # flat: one candidate per compute node; nested: numa1 with either of its FPGAs
    assert rows[("flat", 4, "no-limit")][0] == "4"
    assert rows[("nested", 4, "no-limit")][0] == "8"
    assert rows[("nested", 4, "limit=5")][0] == "5"
    assert int(rows[("flat", 4, "limit=5")][1]) > 0   # statements counted


@pytest.mark.django_db
def test_several_counts_and_chosen_limits_with_memory(bench):
    output = bench("candidates", "--shape", "flat", "--count", 3, 6, "--limits", "none,2",
                   "--reps", 1, "--wipe", "--memory")
    rows = _rows(output)
    assert set(rows) == {("flat", 3, "no-limit"), ("flat", 3, "limit=2"),
                         ("flat", 6, "no-limit"), ("flat", 6, "limit=2")}
    assert rows[("flat", 6, "no-limit")][0] == "6"
    assert rows[("flat", 6, "limit=2")][0] == "2"
    memory = [line for line in output.splitlines() if line.startswith("memory ")]
    assert [line.split()[1:3] for line in memory] == [["flat", "3"], ["flat", "6"]]
    assert all("response" in line and "held after" in line and "after 20 more" in line
               for line in memory)


@pytest.mark.django_db
def test_suite_times_issue_17s_points(bench, monkeypatch):
    # the real suite loads 50,000 providers: keep its shape, shrink its sizes
    monkeypatch.setattr(candidates_benchmark, "SUITE", [
        ("flat", 2, ("none", "1000", "5")), ("flat", 7, ("5",)), ("nested", 2, ("none",))])
    assert set(_rows(bench("candidates", "--suite", "--reps", 1, "--wipe"))) == {
        ("flat", 2, "no-limit"), ("flat", 2, "limit=1000"), ("flat", 2, "limit=5"),
        ("flat", 7, "limit=5"), ("nested", 2, "no-limit")}


@pytest.mark.parametrize("argv, refusal", [
    (["--shape", "flat", "--count", "3", "6"], "--wipe"),
    (["--limits", "none,five"], "--limits: 'five' is neither none nor a number"),
    (["--vs", "http://127.0.0.1:1"], "--url"),
    (["--memory", "--url", "http://127.0.0.1:1"], "--memory measures this process"),
])
def test_bad_arguments_are_refused_before_anything_runs(bench, argv, refusal):
    with pytest.raises(BenchError, match=refusal):
        bench("candidates", *argv)


@pytest.mark.django_db
def test_refuses_to_load_over_existing_providers(bench):
    bench("candidates", "--shape", "flat", "--count", 2, "--limits", "none", "--reps", 1)
    with pytest.raises(BenchError, match="providers exist: use --no-load"):
        bench("candidates", "--shape", "flat", "--count", 2, "--limits", "none", "--reps", 1)
    # --no-load times what is there, sized by its root providers
    rows = _rows(bench("candidates", "--shape", "flat", "--no-load", "--limits", "none",
                       "--reps", 1))
    assert rows == {("flat", 2, "no-limit"): ("2", rows[("flat", 2, "no-limit")][1])}


class _NoLocalDatabase:
    def __getattr__(self, name):
        raise AssertionError("the local database was read")


@pytest.mark.django_db(transaction=True)
def test_a_live_server_is_sized_by_what_it_answers(bench, live_server, monkeypatch):
    # with --url the local database plays no part (it need not even be migrated)
    bench("candidates", "--shape", "nested", "--count", 2, "--limits", "none", "--reps", 1,
          "--wipe")
    monkeypatch.setattr(candidates_benchmark, "ResourceProvider", _NoLocalDatabase())
    output = bench("candidates", "--shape", "nested", "--limits", "5", "--reps", 1,
                   "--url", live_server.url)
    assert _rows(output) == {("nested", 2, "limit=5"): ("4", "-")}


@pytest.mark.django_db(transaction=True)
def test_two_live_servers_side_by_side(bench, live_server):
    bench("candidates", "--shape", "flat", "--count", 3, "--limits", "none", "--reps", 1,
          "--wipe")
    output = bench("candidates", "--shape", "flat", "--limits", "none,2", "--reps", 3,
                   "--url", live_server.url, "--vs", live_server.url)
    assert _rows(output) == {("flat", 3, "no-limit"): ("3", "-"),
                             ("flat", 3, "limit=2"): ("2", "-")}
    paired = [line for line in output.splitlines() if line.startswith("paired ")]
    assert [line.split(":")[0] for line in paired] == [
        "paired flat 3 no limit", "paired flat 3 limit=2"]
    for line in paired:
        ratio = float(line.rsplit(" ", 1)[1])
        assert ratio > 0
        assert f"{live_server.url} " in line and " ms, " in line


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("vs, refusal", [
    ("{url}/elsewhere", "HTTP 404"),                   # answers otherwise: not compared
    ("http://127.0.0.1:9", "http://127.0.0.1:9: "),    # out of reach: a one-line error
])
def test_a_second_server_that_cannot_be_compared_is_refused(bench, live_server, vs, refusal):
    bench("candidates", "--shape", "flat", "--count", 2, "--limits", "none", "--reps", 1,
          "--wipe")
    with pytest.raises(BenchError, match=refusal):
        bench("candidates", "--shape", "flat", "--limits", "none", "--reps", 1,
              "--url", live_server.url, "--vs", vs.format(url=live_server.url))
