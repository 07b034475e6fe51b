"""The package's build, beyond what pyproject.toml declares: which directories make the
packages (the top-level templates/ travels inside placement_site) and the compiled
allocation-candidates engine (candidates/compiled.py builds it into the wheel's
candidates/_compiled; without a C compiler the wheel has the plain modules only)."""
import sys
from pathlib import Path

from setuptools import Distribution, find_packages, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
APPS = ["placement_site", "console", "candidates", "allocations", "providers", "foundation"]


class BuildCompiledEngine(build_ext):
    """Compiles the engine's modules with the same build() scripts/compile-engine uses."""

    def run(self):
        sys.path.insert(0, str(HERE))
        from candidates import compiled

        try:
            print(compiled.build(into=Path(self.build_lib) / "candidates" / "_compiled"))
        except RuntimeError as exc:  # no Cython or no compiler: the plain modules serve
            print(f"warning: {exc}", file=sys.stderr)


class WithCompiledEngine(Distribution):
    """A wheel for the platform it was built on, as it may hold compiled modules."""

    def has_ext_modules(self):
        return True


setup(
    packages=[*find_packages(include=[f"{app}*" for app in APPS] + APPS),
              "placement_site.templates"],
    package_dir={"placement_site.templates": "templates"},
    package_data={"placement_site.templates": ["**/*.html", "**/*.css"],
                  "console": ["static/**/*", "templates/**/*.html", "templates/**/*.css"]},
    distclass=WithCompiledEngine,
    cmdclass={"build_ext": BuildCompiledEngine},
)
