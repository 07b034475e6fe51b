"""manage.py export_placement_db URL: the way back to Placement."""
from django.core.management.base import BaseCommand, CommandError

from allocations.upstream import UpstreamError, schema
from allocations.upstream.exporter import BATCH_SIZE, export_database


class Command(BaseCommand):
    help = (
        f"Write this service's data into an empty database in {schema.RELEASE}'s schema "
        f"(tables, indexes, alembic_version {schema.REVISION}), so that Placement can serve "
        "it again. URL: mysql+pymysql://user:pw@host/db, postgresql://user:pw@host/db or "
        "sqlite:///path (a new file). The database must hold no Placement table."
    )

    def add_arguments(self, parser):
        parser.add_argument("url", metavar="URL", help="The empty database to write.")
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE,
                            help=f"Rows per write batch (default {BATCH_SIZE}).")

    def handle(self, *args, url, batch_size, **options):
        try:
            written = export_database(url, batch_size=batch_size)
        except UpstreamError as exc:
            raise CommandError(str(exc))
        for table, rows in written.items():
            self.stdout.write(f"{table:30} {rows:>10}")
        self.stdout.write(self.style.SUCCESS(
            f"Exported {sum(written.values())} rows (schema revision {schema.REVISION})."))
