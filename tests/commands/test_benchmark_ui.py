"""benchmark_ui builds its cloud, answers every UI page and leaves nothing behind.

No timing assertions: speed targets live in the benchmark's output, not in tests."""
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from placement_site.management.commands.benchmark_ui import build, plan
from providers.models import ResourceProvider
from tests.factories import make_provider
from tests.providers.tree_checks import assert_tree_integrity


PAGES = [
    "dashboard", "providers, page 1 by name", "providers, page 3 by name",
    "providers, sorted by usage", "providers, usage of VCPU", "providers, resources + required",
    "providers, member_of + !trait", "providers, over capacity", "providers, name contains",
    "providers CSV, all", "providers CSV, by usage", "subtree fragment of big-0",
    "provider page (cn0000)", "capacity", "capacity ?rc=VCPU", "status", "resource classes",
    "traits", "bulk list VCPU (", "POST bulk preview (", "usages", "usages CSV",
    "consumer page", "candidates, page 1", "candidates, page 5",
    "candidates, granular + sharing", "why-not, empty answer", "why-not, traits + aggregate",
    "why-not, isolate + same_subtree", "why-not.json, empty answer",
]


@pytest.mark.django_db
def test_every_page_answers_and_is_listed():
    out = StringIO()
    call_command("benchmark_ui", providers=25, repeat=1, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("built 25 providers")
    rows = {line[:36].rstrip(): line[36:].split() for line in lines[2:]}
    assert len(rows) == len(PAGES)
    for expected, (label, columns) in zip(PAGES, rows.items()):
        assert label.startswith(expected)
        assert columns[0] == "200", label
    assert not ResourceProvider.objects.exists()   # rolled back


def test_plan_has_the_asked_number_of_providers():
    def count(node):
        return 1 + sum(count(child) for child in node.children)

    for providers in (20, 25, 1000, 1234):
        assert sum(count(tree) for tree in plan(providers).trees) == providers


@pytest.mark.django_db
@pytest.mark.parametrize("options, message", [
    ({"providers": 5}, "--providers must be at least 20, not 5"),
    ({"repeat": 0}, "--repeat must be at least 1, not 0"),
])
def test_bad_arguments(options, message):
    with pytest.raises(CommandError, match=message):
        call_command("benchmark_ui", **options)


@pytest.mark.django_db
def test_refuses_a_database_with_providers():
    make_provider("existing")
    with pytest.raises(CommandError, match="providers exist"):
        call_command("benchmark_ui", providers=20, repeat=1)


@pytest.mark.django_db
def test_built_trees_are_consistent():
    """The bulk-created nested-set fields are what django-mptt would have written."""
    assert build(plan(40)) == 40
    assert_tree_integrity()
