"""`python -m bench` from a checkout: sets Django up itself, names its benchmarks, and
a refusal is one line on stderr and exit status 1, never a traceback."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench(tmp_path, *argv):
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{tmp_path / 'unused.sqlite3'}")
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.pop("DATABASE_REPLICA_URLS", None)
    return subprocess.run([sys.executable, "-m", "bench", *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_help_names_every_benchmark(tmp_path):
    done = _bench(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    for name in ("candidates", "ui", "replicas", "placement_import"):
        assert f"\n    {name}" in done.stdout


@pytest.mark.parametrize("argv, message", [
    (["ui", "--providers", "5"], "--providers must be at least 20, not 5"),
    (["replicas"], "no replica configured: set DATABASE_REPLICA_URLS"),
    (["candidates", "--limits", "none,five"], "--limits: 'five' is neither none nor a number"),
])
def test_a_refusal_is_one_line(tmp_path, argv, message):
    done = _bench(tmp_path, *argv)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"python -m bench: error: {message}")
    assert done.stdout == ""


def test_an_unknown_benchmark_is_a_usage_error(tmp_path):
    done = _bench(tmp_path, "nothing")
    assert done.returncode == 2
    assert "invalid choice: 'nothing'" in done.stderr
