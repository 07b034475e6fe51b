"""Placement, in Django: the project package (settings, the API's plumbing, the roof
that composes the apps)."""

# The release; the package metadata (pyproject.toml) takes it from here.
__version__ = "1.0.0"
