"""Placement, in Django: the project on top of the apps (settings, the route table, the
OpenAPI document, health, the console scripts and the server supervisor). The ground
floor the apps stand on is the foundation package."""

# The release; the package metadata (pyproject.toml) takes it from here.
__version__ = "1.0.0"
