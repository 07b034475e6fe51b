from django.apps import AppConfig


class AllocationsConfig(AppConfig):
    name = "allocations"
    verbose_name = "Allocations and consumers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Providers' rules ask their usage questions through providers.usage; the
        # allocations app, which sees both tables, answers them.
        from allocations import usage
        from providers import usage as asked

        asked.install(usage)
