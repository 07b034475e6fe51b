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
        post_migrate.connect(_groups_after_migrate, sender=self)


def _groups_after_migrate(using="default", **kwargs):
    # After the domain apps' permissions exist (they migrate before the console).
    from console.groups import ensure_groups

    ensure_groups(using=using)
