"""manage.py export_tree: write provider trees (optionally with allocations) as JSON."""
import json

from django.core.management.base import BaseCommand, CommandError

from allocations.tree_documents import TreeError, export_trees


class Command(BaseCommand):
    help = (
        "Export provider trees as a JSON tree document: providers (parents first) with "
        "their inventories, traits and aggregates, and the custom resource classes and "
        "traits they use. Give provider UUIDs (each exports the whole tree it belongs "
        "to) or --all. --allocations adds the complete allocations of every consumer "
        "holding something on an exported provider. Re-create with `import_tree`."
    )

    def add_arguments(self, parser):
        parser.add_argument("uuids", nargs="*", metavar="UUID",
                            help="A provider of each tree to export.")
        parser.add_argument("--all", action="store_true", dest="everything",
                            help="Export every provider tree.")
        parser.add_argument("--allocations", action="store_true",
                            help="Include the consumers' allocations.")
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="Write to FILE instead of standard output.")

    def handle(self, *args, uuids, everything, allocations, output, **options):
        if bool(uuids) == bool(everything):
            raise CommandError("Give one or more provider UUIDs, or --all (not both).")
        try:
            document, warnings = export_trees(uuids, everything, allocations)
        except TreeError as exc:
            raise CommandError(str(exc))
        for warning in warnings:
            self.stderr.write(self.style.WARNING(f"Warning: {warning}"))
        text = json.dumps(document, indent=2, sort_keys=False)
        if output:
            try:
                with open(output, "w", encoding="utf-8") as handle:
                    handle.write(text + "\n")
            except OSError as exc:
                raise CommandError(f"Cannot write {output}: {exc.strerror or exc}")
            self.stderr.write(f"Exported {len(document['providers'])} provider(s)"
                              + (f" and {len(document.get('allocations', {}))} consumer(s)"
                                 if allocations else "") + f" to {output}.")
        else:
            self.stdout.write(text)
