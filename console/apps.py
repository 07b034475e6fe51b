from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The operator console: every page under /ui/, on the floor above the domain apps."""

    name = "console"
    verbose_name = "Operator console"
