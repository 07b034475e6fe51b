from django.apps import AppConfig
from django.conf import settings


class CandidatesConfig(AppConfig):
    name = "candidates"
    verbose_name = "Allocation candidates"

    def ready(self):
        # Before any view imports the engine: its modules load compiled when built
        # (candidates/compiled.py), unless the setting asks for the plain ones.
        if settings.PLACEMENT_COMPILED_ENGINE:
            from candidates import compiled

            compiled.install()
