"""Run a benchmark as `python -m bench` runs it, in this process: bench(argv) -> output."""
from io import StringIO

import pytest

from bench.__main__ import run


@pytest.fixture
def bench():
    def run_bench(*argv):
        out = StringIO()
        run([str(arg) for arg in argv], out)
        return out.getvalue()

    return run_bench
