"""manage.py sync_standard: add the installed standard traits and resource classes."""
from django.core.management.base import BaseCommand

from foundation.actor import ActorCommandMixin
from providers.services.standard_names import standard_names_sync


class Command(ActorCommandMixin, BaseCommand):
    help = (
        "Add the standard resource classes (os-resource-classes) and standard traits "
        "(os-traits) of the installed libraries that the database does not have yet. "
        "Nothing is removed: custom classes and traits, and standard names a newer "
        "library dropped, stay. `migrate` does the same automatically; run this after "
        "upgrading os-traits / os-resource-classes without a migration."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--database", default="default",
            help="Database alias to update (default: %(default)s).")

    def handle(self, *args, **options):
        added_classes, added_traits = standard_names_sync(using=options["database"])
        for kind, names in (("resource class", added_classes), ("trait", added_traits)):
            for name in names:
                self.stdout.write(f"Added {kind} {name}")
        self.stdout.write(self.style.SUCCESS(
            f"{len(added_classes)} resource class(es) and {len(added_traits)} trait(s) added."))
