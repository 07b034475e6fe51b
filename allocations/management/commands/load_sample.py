"""manage.py load_sample: load example provider topologies through the API."""
from django.core.management.base import BaseCommand, CommandError

from allocations.management.commands._progress import progress
from allocations.tree_documents import TreeError, import_document
from foundation.actor import ActorCommandMixin
from providers.models import ResourceProvider
from providers.samples import SAMPLES, sample_document


class Command(ActorCommandMixin, BaseCommand):
    help = (
        "Load example topologies (providers, inventories, traits, aggregates and a "
        "couple of consumers with allocations) through the services the API writes with. "
        "NAME is one of the names shown by --list, or `all`. Loading is idempotent. "
        "--if-empty loads only into a database without any provider (scripts/serve "
        "runs `load_sample --if-empty all`)."
    )

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*", metavar="NAME",
                            help="Sample name(s), or `all`.")
        parser.add_argument("--list", action="store_true", dest="list_only",
                            help="Show the available samples and exit.")
        parser.add_argument("--if-empty", action="store_true",
                            help="Do nothing when any resource provider exists.")

    def handle(self, *args, names, list_only, if_empty, **options):
        if list_only:
            for name, (_, description) in SAMPLES.items():
                self.stdout.write(f"{name:16} {description}")
            return
        if not names:
            raise CommandError("Name a sample (see --list) or `all`.")
        if "all" in names:
            names = list(SAMPLES)
        unknown = [n for n in names if n not in SAMPLES]
        if unknown:
            raise CommandError(f"Unknown sample(s): {', '.join(unknown)}. "
                               f"Available: {', '.join(SAMPLES)}, all.")
        if if_empty and ResourceProvider.objects.exists():
            self.stdout.write("Resource providers exist already; no sample loaded.")
            return
        for name in dict.fromkeys(names):
            document = sample_document(name)
            total = len(document["providers"]) + len(document.get("allocations", {}))
            try:
                with progress(self.stderr, f"Loading {name}", total) as advance:
                    report = import_document(document, progress=advance)
            except TreeError as exc:
                raise CommandError(f"Sample {name}: {exc}")
            summary = list(report.lines())[-1]
            self.stdout.write(self.style.SUCCESS(f"Sample {name}: {summary}"))
