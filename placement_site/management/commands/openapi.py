"""python manage.py openapi [--output FILE]: write the OpenAPI document (stdout by default)."""
import json

from django.core.management.base import BaseCommand, CommandError

from placement_site import openapi


class Command(BaseCommand):
    help = "Write the OpenAPI 3.1 document of the Placement API (the one /openapi.json serves)."

    def add_arguments(self, parser):
        parser.add_argument("--output", "-o", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        text = json.dumps(openapi.document(), indent=2) + "\n"
        if not options["output"]:
            self.stdout.write(text, ending="")
            return
        try:
            with open(options["output"], "w", encoding="utf-8") as output:
                output.write(text)
        except OSError as exc:
            raise CommandError(f"cannot write {options['output']}: {exc.strerror}")
