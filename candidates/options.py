"""The [placement] options that steer candidate generation, read from settings in one place.

Both GET /allocation_candidates and the UI's candidates page pass these to
engine.find_candidates (and the extensions to request.parse_request), so the page
answers what the API would.
"""
from django.conf import settings


def engine_options():
    """Keyword arguments for engine.find_candidates from the deployment's settings."""
    return {
        "randomize": settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES,
        "max_candidates": settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES,
        "breadth_first": (settings.PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY
                          == "breadth-first"),
    }


def extensions():
    """The names of the opt-in extensions that are on ([placement] extensions), for
    request.parse_request (docs/clients/extensions.md)."""
    return settings.PLACEMENT_EXTENSIONS
