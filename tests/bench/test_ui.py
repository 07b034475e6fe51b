"""python -m bench ui builds its cloud, answers every UI page and leaves nothing behind.

No timing assertions: speed targets live in the benchmark's output, not in tests."""
import pytest

from bench import BenchError
from providers.models import ResourceProvider
from tests.factories import make_provider

PAGES = [
    "dashboard", "providers, page 1 by name", "providers, page 3 by name",
    "providers, sorted by usage", "providers, usage of VCPU", "providers, resources + required",
    "providers, member_of + !trait", "providers, over capacity", "providers, name contains",
    "providers CSV, all", "providers CSV, by usage", "subtree fragment of big-0",
    "provider page (cn0000)", "capacity", "capacity ?rc=VCPU", "status", "resource classes",
    "traits", "bulk list VCPU (", "POST bulk preview (", "usages", "usages CSV",
    "consumer page", "move picker, VCPU", "move picker, VCPU, page 9",
    "move picker, VCPU, name contains", "move picker, CUSTOM_DEV", "candidates, page 1",
    "candidates, page 5", "candidates, by host name", "candidates, most room left, page 2",
    "candidates, host name contains",
    "candidates, granular + sharing", "why-not, empty answer", "why-not, traits + aggregate",
    "why-not, isolate + same_subtree", "why-not.json, empty answer",
]


@pytest.mark.django_db
def test_every_page_answers_and_is_listed(bench):
    lines = bench("ui", "--providers", 25, "--repeat", 1).splitlines()
    assert lines[0].startswith("built 25 providers")
    rows = {line[:36].rstrip(): line[36:].split() for line in lines[2:]}
    assert len(rows) == len(PAGES)
    for expected, (label, columns) in zip(PAGES, rows.items()):
        assert label.startswith(expected)
        assert columns[0] == "200", label
    assert not ResourceProvider.objects.exists()   # rolled back


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
