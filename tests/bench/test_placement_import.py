"""python -m bench placement_import on a tiny generated source (a smoke test: the figures
are machine-dependent, the report's shape and the rollback are not)."""
import re
from io import StringIO

import pytest
from django.core.management import call_command

from allocations.models import Allocation, Consumer
from bench import BenchError
from bench.__main__ import run as run_bench
from providers.models import ResourceProvider
from tests.upstream.conftest import source_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def generated(tmp_path):
    url = f"sqlite:///{tmp_path / 'generated.sqlite'}"
    out = StringIO()
    run_bench(["placement_db", url, "--providers", "10", "--consumers", "6"], out)
    report = out.getvalue()
    assert re.search(r"^resource_providers\s+10$", report, re.M), report
    assert re.search(r"^allocations\s+18$", report, re.M), report  # 3 per consumer
    assert source_rows(url, "SELECT COUNT(*) FROM resource_providers "
                            "WHERE parent_provider_id IS NULL") == [(2,)]  # trees of 1 + 4
    return url


def test_reports_rows_per_second_and_rolls_back(bench, generated):
    report = bench("placement_import", generated, "--batch-size", 4)
    assert re.search(r"^target \w+, batch size 4, \d+ CPU\(s\), load average [\d.]+$",
                     report, re.M), report
    assert re.search(r"^allocations\s+18$", report, re.M), report
    total = re.search(r"^(\d+) rows in [\d.]+ s \([\d.]+ s reading and writing, [\d.]+ s "
                      r"verifying\): \d+ rows/s, peak memory \d+ MB \(rolled back\)$",
                      report, re.M)
    assert total, report
    assert int(total.group(1)) >= 10 + 6 + 18
    assert not ResourceProvider.objects.exists() and not Allocation.objects.exists()


def test_keeps_the_import_when_asked(bench, generated):
    assert "rolled back" not in bench("placement_import", generated, "--keep")
    assert (ResourceProvider.objects.count(), Consumer.objects.count(),
            Allocation.objects.count()) == (10, 6, 18)
    with pytest.raises(BenchError, match="benchmark into an empty database"):
        bench("placement_import", generated)


def test_an_unreadable_source_is_one_line(bench, tmp_path):
    with pytest.raises(BenchError):
        bench("placement_import", f"sqlite:///{tmp_path / 'missing.sqlite'}")
