"""python -m bench ui builds its cloud, answers every UI page and leaves nothing behind.

No timing assertions: speed targets live in the benchmark's output, not in tests."""
import pytest

from bench import BenchError
from providers.models import ChangeRecord, ResourceProvider
from tests.factories import make_provider

PAGES = [
    "dashboard", "search, part of a name", "search, a provider's uuid",
    "search, a consumer uuid's first 8", "search, part of a trait", "providers, page 1 by name",
    "providers, page 3 by name",
    "providers, sorted by usage", "providers, usage of VCPU", "providers, resources + required",
    "providers, member_of + !trait", "providers, over capacity", "providers, name contains",
    "providers CSV, all", "providers CSV, by usage", "subtree fragment of big-0",
    "subtree page of big-0", "provider page (cn0000)", "provider page (big-0)",
    "provider page (shared-disk00)", "capacity",
    "history, a host (cn0000), 30d", "history, a device tree (big-0), 30d",
    "history, the shared aggregate, 30d", "history, VCPU cloud-wide, 30d",
    "history, the whole cloud, 7d", "history, the whole cloud, 30d, page 50",
    "history CSV, VCPU cloud-wide, 30d", "capacity ?rc=VCPU", "status",
    "resource classes", "traits", "bulk list VCPU, page 1", "bulk list VCPU, a tree",
    "bulk list VCPU, an aggregate", "bulk list VCPU, a trait",
    "POST bulk preview VCPU, a trait, all", "POST bulk preview (", "bulk traits and aggregates, page 1",
    "bulk traits and aggregates, an aggregate", "POST bulk traits preview, every provider",
    "usages",
    "usages by project, by VCPU", "usages, last page", "usages CSV", "consumers, page 1",
    "consumers, last page", "consumers of a project", "consumer page", "consumers on a host", "whole-host move picker",
    "whole-host move picker, has everything",
    "provider page (big-0), consumers by VCPU", "move picker, VCPU",
    "move picker, VCPU, has everything", "move picker, VCPU, page 9", "move picker, VCPU, name contains",
    "move picker, CUSTOM_DEV", "candidates, page 1",
    "candidates, page 5", "candidates, by host name", "candidates, most room left, page 2",
    "candidates, host name contains",
    "candidates, granular + sharing", "why-not, empty answer",
    "why-not, traits + aggregate", "why-not, isolate + same_subtree",
    "why-not.json, empty answer", "admin index", "admin providers", "admin providers, page 20",
    "admin providers, search", "admin provider change (cn0000)",
    "admin provider change (big-0)", "admin provider change (shared-disk)",
    "admin provider add", "admin parent autocomplete", "admin consumers",
    "admin consumers, search", "admin consumer change", "admin projects", "admin users",
    "admin resource classes", "admin traits", "admin change log",
    "admin change log, consumers", "admin change log, search",
]


@pytest.mark.django_db
def test_every_page_answers_and_is_listed(bench):
    lines = bench("ui", "--providers", 25, "--consumers", 40, "--repeat", 1).splitlines()
    assert lines[0].startswith("built 25 providers, 40 consumers, ")
    rows = {line[:40].rstrip(): line[40:].split() for line in lines[2:]}
    assert len(rows) == len(PAGES)
    for expected, (label, columns) in zip(PAGES, rows.items()):
        assert label.startswith(expected)
        assert columns[0] == ("302" if "uuid" in label else "200"), label
    assert not ResourceProvider.objects.exists()   # rolled back
    assert not ChangeRecord.objects.filter(actor="command:bench").exists()


@pytest.mark.django_db
def test_only_times_the_pages_named(bench):
    lines = bench("ui", "--providers", 25, "--repeat", 1, "--only", "SEARCH",
                  "--only", "has everything").splitlines()
    assert [line[:40].rstrip() for line in lines[2:]] == [
        "search, part of a name", "search, a provider's uuid",
        "search, a consumer uuid's first 8", "search, part of a trait",
        "whole-host move picker, has everything", "move picker, VCPU, has everything",
        "admin providers, search", "admin consumers, search", "admin change log, search"]


@pytest.mark.django_db
@pytest.mark.parametrize("argv, message", [
    (["--providers", "5"], "--providers must be at least 20, not 5"),
    (["--repeat", "0"], "--repeat must be at least 1, not 0"),
])
def test_bad_arguments(bench, argv, message):
    with pytest.raises(BenchError, match=message):
        bench("ui", *argv)


@pytest.mark.django_db
def test_refuses_a_database_with_providers(bench):
    make_provider("existing")
    with pytest.raises(BenchError, match="providers exist"):
        bench("ui", "--providers", 20, "--repeat", 1)


def test_an_unmigrated_database_is_named_in_one_line(tmp_path):
    """A new database: say to migrate it, not a traceback."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, DATABASE_URL=f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    done = subprocess.run([sys.executable, "-m", "bench", "ui", "--providers", "20"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "python -m bench: error: cannot read the providers table (OperationalError); "
        "migrate the database first: python manage.py migrate"]
