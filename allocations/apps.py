from django.apps import AppConfig


class AllocationsConfig(AppConfig):
    name = "allocations"
    verbose_name = "Allocations and consumers"
    default_auto_field = "django.db.models.BigAutoField"
