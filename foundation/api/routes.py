"""Build Placement routes: an explicit method -> action table per path."""
from django.urls import path as django_path


def route(path, viewset, actions):
    """A URL pattern serving `actions` ({"get": "list", ...}) in Placement's Allow order.

    `path` uses Django converters, e.g. "resource_providers/<str:uuid>".
    """
    allow = ", ".join(method.upper() for method in actions)
    return django_path(path, viewset.as_view(dict(actions), allow=allow))
