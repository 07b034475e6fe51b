"""The package's build, beyond what pyproject.toml declares: which directories make the
packages (the top-level templates/ travels inside placement_site) and the compiled
allocation-candidates engine."""
from setuptools import find_packages, setup

APPS = ["placement_site", "providers", "allocations", "candidates"]

setup(
    packages=[*find_packages(include=[f"{app}*" for app in APPS] + [app for app in APPS]),
              "placement_site.templates"],
    package_dir={"placement_site.templates": "templates"},
    package_data={"placement_site.templates": ["**/*.html", "**/*.css"],
                  "providers": ["static/**/*"]},
)
