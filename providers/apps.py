from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProvidersConfig(AppConfig):
    name = "providers"
    verbose_name = "Resource providers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Standard traits and classes must exist after every `migrate`, including
        # after an os-traits / os-resource-classes upgrade that adds names.
        post_migrate.connect(_sync_standard_after_migrate, sender=self)


def _sync_standard_after_migrate(**kwargs):
    from foundation.actor import acting_as
    from providers.services.standard_names import standard_names_sync

    with acting_as("command:migrate"):  # the change log's actor of the names added
        standard_names_sync(using=kwargs.get("using", "default"))
