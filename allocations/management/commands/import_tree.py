"""manage.py import_tree: create provider trees from a JSON tree document.

Import a tree document written by `export_tree` (or by hand): create missing providers,
custom resource classes and traits, set inventories, traits and aggregates, and allocate
consumers that do not exist yet. Everything goes through the Placement API in-process,
in one transaction: all or nothing. Idempotent: importing the same file again changes
nothing. Conflicts are refused: a uuid that exists with another name or parent, a name
used by another uuid, a consumer that holds different allocations.
"""
from django.core.management.base import BaseCommand, CommandError

from allocations.management.commands._progress import progress
from allocations.tree_documents import TreeError, import_document, load_document
from foundation.actor import ActorCommandMixin


class Command(ActorCommandMixin, BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE", help="The JSON tree document.")

    def handle(self, *args, file, **options):
        try:
            document = load_document(file)
        except TreeError as exc:
            raise CommandError(str(exc))
        total = len(document["providers"]) + len(document.get("allocations", {}))
        try:
            with progress(self.stderr, "Importing", total) as advance:
                report = import_document(document, progress=advance)
        except TreeError as exc:
            raise CommandError(f"Nothing was imported: {exc}")
        for line in report.lines():
            self.stdout.write(line)
