"""manage.py benchmark_placement_import URL: how fast import_placement_db runs here."""
import os
import resource
import sys

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from allocations.upstream import UpstreamError
from allocations.upstream.importer import BATCH_SIZE, import_database


class Command(BaseCommand):
    help = (
        "Import the Placement database at URL (see generate_placement_db) into this empty "
        "database exactly as import_placement_db does, verification included, then roll "
        "back (--keep commits). Reports rows, seconds, rows/s and the peak memory."
    )

    def add_arguments(self, parser):
        parser.add_argument("url", metavar="URL")
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
        parser.add_argument("--keep", action="store_true",
                            help="Commit the imported data instead of rolling back.")

    def handle(self, *args, url, batch_size, keep, **options):
        try:
            result = import_database(url, batch_size=batch_size, keep=keep,
                                     progress=sys.stderr if sys.stderr.isatty() else None)
        except UpstreamError as exc:
            raise CommandError(str(exc))
        if result.nothing_to_do:
            raise CommandError("the target already holds this data; benchmark into an "
                               "empty database")
        if result.problems.stops_import(False) or result.differences:
            raise CommandError("the import did not verify; run import_placement_db --dry-run")
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.stdout.write(
            f"target {connection.vendor}, batch size {batch_size}, {os.cpu_count()} CPU(s), "
            f"load average {os.getloadavg()[0]:.2f}")
        for table, rows in result.written.items():
            self.stdout.write(f"{table:30} {rows:>10}")
        self.stdout.write(self.style.SUCCESS(
            f"{result.rows} rows in {result.seconds:.1f} s ({result.write_seconds:.1f} s "
            f"reading and writing, {result.seconds - result.write_seconds:.1f} s verifying): "
            f"{result.rows / result.seconds:.0f} rows/s, peak memory {peak_mb:.0f} MB"
            + ("" if keep else " (rolled back)")))
