from django.apps import AppConfig


class RoofConfig(AppConfig):
    """Registered for its management command `openapi` (the document as a file)."""

    name = "placement_site.roof"
    label = "placement_roof"
    verbose_name = "Composition of the apps (OpenAPI document, health)"
