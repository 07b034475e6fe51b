from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ConsoleConfig(AppConfig):
    """The operator console: every page under /ui/, on the floor above the domain apps."""

    name = "console"
    verbose_name = "Operator console"

    def ready(self):
        # The console's own rule, in the one Enforcer the API uses (console/door.py).
        from console.door import CONSOLE_RULES
        from foundation.api import policy

        policy.register_defaults(CONSOLE_RULES)
        # The console has no models, so no post_migrate of its own: the groups are
        # completed after each app's, the last time with every permission made.
        post_migrate.connect(_groups_after_migrate, dispatch_uid="console-groups")


def _groups_after_migrate(sender, using="default", **kwargs):
    if sender.label in ("providers", "allocations"):
        from console.groups import ensure_groups

        ensure_groups(using=using)
