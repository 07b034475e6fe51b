"""manage.py generate_placement_db URL: a large Placement-schema database to import."""
from django.core.management.base import BaseCommand, CommandError

from allocations.upstream import UpstreamError, schema
from allocations.upstream.generate import generate


class Command(BaseCommand):
    help = (
        f"Create {schema.RELEASE}'s schema in an empty database (sqlite:///path, "
        "mysql+pymysql://user:pw@host/db or postgresql://...) and fill it with synthetic "
        "data for the import benchmark: trees of 1 + 4 providers, consumers holding three "
        "allocations each. Defaults: 10,000 providers, 100,000 consumers (300,000 "
        "allocations)."
    )

    def add_arguments(self, parser):
        parser.add_argument("url", metavar="URL")
        parser.add_argument("--providers", type=int, default=10000)
        parser.add_argument("--consumers", type=int, default=100000)
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args, url, providers, consumers, seed, **options):
        if providers < 5 or consumers < 1:
            raise CommandError("--providers must be at least 5 and --consumers at least 1")
        try:
            counts = generate(url, providers=providers, consumers=consumers, seed=seed)
        except UpstreamError as exc:
            raise CommandError(str(exc))
        for table, rows in counts.items():
            self.stdout.write(f"{table:30} {rows:>10}")
        self.stdout.write(self.style.SUCCESS(f"Generated {sum(counts.values())} rows."))
