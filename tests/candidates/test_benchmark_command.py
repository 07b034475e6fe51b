"""The benchmark_candidates command loads both perf shapes and times the canonical queries."""
from io import StringIO

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_loads_both_shapes_and_prints_a_table():
    out = StringIO()
    call_command("benchmark_candidates", shape="both", count=4, reps=1, wipe=True, stdout=out)
    lines = out.getvalue().splitlines()
    rows = {}
    for line in lines:
        if line.startswith(("flat ", "nested ")):
            parts = line.replace("no limit", "no-limit").split()
            rows[(parts[0], parts[1])] = parts[2]
    # flat: one candidate per compute node; nested: numa1 with either of its FPGAs
    assert rows[("flat", "no-limit")] == "4"
    assert rows[("nested", "no-limit")] == "8"
    assert rows[("nested", "limit=5")] == "5"
