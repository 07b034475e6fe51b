"""The import contracts (.importlinter) hold for the tree, and they catch what they forbid.

`lint-imports` runs on the real tree, then on copies of it with one forbidden import
added each, where it must fail and name that import.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("placement_site", "console", "candidates", "allocations", "providers", "foundation")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(tree):
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=tree,
                          capture_output=True, text=True, timeout=300)


def test_the_tree_keeps_every_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 3 kept, 0 broken." in result.stdout


@pytest.fixture
def tree_copy(tmp_path):
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


FLOORS = "Imports go down only"


@pytest.mark.parametrize("module, statement, reported", [
    # an upward import between the apps
    ("providers/query_params.py", "import candidates", "providers.query_params -> candidates"),
    ("allocations/services.py", "from candidates import engine",
     "allocations.services -> candidates.engine"),
    # the foundation importing an app ...
    ("foundation/api/viewsets.py", "from providers import models",
     "foundation.api.viewsets -> providers.models"),
    # ... or the project on top
    ("foundation/ops/logs.py", "from placement_site import health",
     "foundation.ops.logs -> placement_site.health"),
    # an app importing the project
    ("allocations/tree_documents.py", "from placement_site.inprocess import PlacementClient",
     "allocations.tree_documents -> placement_site.inprocess"),
    # a domain app importing the console above it
    ("providers/admin/providers.py", "from console.providers import forms",
     "providers.admin.providers -> console.providers.forms"),
], ids=["providers-imports-candidates", "allocations-imports-candidates",
        "foundation-imports-providers", "foundation-imports-the-project",
        "app-imports-the-project", "app-imports-the-console"])
def test_a_forbidden_import_breaks_its_contract(tree_copy, module, statement, reported):
    with open(tree_copy / module, "a", encoding="utf-8") as source:
        source.write(f"\n{statement}  # noqa\n")
    result = lint_imports(tree_copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Contracts: 2 kept, 1 broken." in result.stdout
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert FLOORS in broken
    assert reported in broken


@pytest.mark.parametrize("module, statement, contract, reported", [
    ("console/overview.py", "from providers.api.views import resource_providers",
     "never on an app's API", "console.overview -> providers.api.views.resource_providers"),
    ("allocations/management/commands/reshape.py",
     "from allocations.api import reshaper_views", "Commands call services",
     "allocations.management.commands.reshape -> allocations.api.reshaper_views"),
], ids=["console-imports-an-api", "command-imports-an-api"])
def test_the_console_and_commands_never_import_an_api(tree_copy, module, statement,
                                                      contract, reported):
    with open(tree_copy / module, "a", encoding="utf-8") as source:
        source.write(f"\n{statement}  # noqa\n")
    result = lint_imports(tree_copy)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert contract in broken and reported in broken


# What an import contract cannot see: a lower floor reaching a higher floor's tables by
# field names (ORM lookups through a reverse relation) or through a model's _meta.
REACHES = re.compile(r"allocations__|\.allocations\b|_meta\.get_field|related_model")


def test_providers_names_nothing_of_allocations():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted((ROOT / "providers").rglob("*.py"))
             if "migrations" not in path.parts
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if REACHES.search(line) and not line.lstrip().startswith("#")]
    assert found == []


def test_the_reach_check_sees_a_reach():
    assert REACHES.search('providers.filter(allocations__isnull=False)')
    assert REACHES.search('provider.allocations.exists()')
    assert REACHES.search('ResourceProvider._meta.get_field("allocations")')
    assert not REACHES.search('usage.provider_in_use(provider)')
