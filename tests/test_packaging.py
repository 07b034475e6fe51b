"""The package's metadata (pyproject.toml) and the pinned set the README's commands
install (requirements.txt) name the same dependencies, the pins inside the declared
ranges; the wheel's contents are checked by CI, which installs and runs it."""
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [*project["dependencies"],
             *(item for group in project["optional-dependencies"].values() for item in group)]
    return {canonicalize_name(Requirement(item).name): Requirement(item) for item in names}


def pinned():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    requirements = [Requirement(line) for line in lines if line.strip()
                    and not line.startswith("#")]
    return {canonicalize_name(r.name): r for r in requirements}


def test_every_pin_is_declared_and_every_declared_dependency_pinned():
    assert set(pinned()) == set(declared())


def test_every_pin_is_exact_and_inside_the_declared_range():
    ranges = declared()
    for name, requirement in pinned().items():
        (spec,) = requirement.specifier
        assert spec.operator == "==", requirement
        assert ranges[name].specifier.contains(spec.version), (requirement, ranges[name])


def test_the_version_is_one_place():
    from placement_site import __version__

    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    assert 'version = {attr = "placement_site.__version__"}' in (
        ROOT / "pyproject.toml").read_text()


def recipe_block(name):
    """The fenced commands after `<!-- recipe: name -->` in the install page (the ones
    .ci/package-recipe runs)."""
    text = (ROOT / "docs/operators/production.md").read_text()
    match = re.search(rf"<!-- recipe: {name} -->\n```sh\n(.*?)\n```", text, re.DOTALL)
    return match.group(1)


def test_the_systemd_unit_runs_the_recipes_serve_command():
    command = " ".join(recipe_block("serve").replace("\\\n", " ").split())
    command = re.sub(r'"\$PLACEMENT_HOME(/[^"]*)"', r"/opt/placement\1", command)
    unit = (ROOT / "docs/operators/examples/placement-api.service").read_text()
    (exec_start,) = re.findall(r"^ExecStart=(.*)$", unit, re.MULTILINE)
    assert exec_start == command


def test_the_recipe_installs_the_wheel_and_runs_placements_commands():
    install = recipe_block("install")
    for step in ("pip wheel", "--constraint requirements.txt dist/placement_django-",
                 "placement-manage\" db sync", "placement-status\" upgrade check"):
        assert step in install
