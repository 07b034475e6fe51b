from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "placement_site.ops"
    label = "placement_ops"
    verbose_name = "Operations (metrics, health, OpenAPI)"
