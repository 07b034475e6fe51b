"""manage.py import_placement_db URL: bring an existing Placement database across."""
import sys

from django.core.management.base import BaseCommand, CommandError

from allocations.upstream import UpstreamError, schema
from allocations.upstream.importer import BATCH_SIZE, import_database
from foundation.actor import ActorCommandMixin


def verification_table(rows):
    """The verification table as lines: view, source rows, target rows, equal."""
    lines = [f"{'content':30} {'source':>10} {'target':>10}  equal"]
    lines += [f"{name:30} {theirs:>10} {ours:>10}  {'yes' if equal else 'NO'}"
              for name, theirs, ours, equal in rows]
    return lines


class Command(ActorCommandMixin, BaseCommand):
    help = (
        f"Import an OpenStack Placement database ({schema.RELEASE}, schema revision "
        f"{schema.REVISION}) into this (empty) database, exactly: providers and trees, "
        "inventories, classes, traits, aggregates, projects, users, consumer types, "
        "consumers, allocations, generations and timestamps. URL as Placement's "
        "[placement_database] connection: mysql+pymysql://user:pw@host/db, "
        "postgresql://user:pw@host/db or sqlite:///path. The source is only read, in one "
        "snapshot; everything is written in one transaction and verified (row counts and "
        "usage per provider and class) or rolled back."
    )

    def add_arguments(self, parser):
        parser.add_argument("url", metavar="URL", help="The Placement database to read.")
        parser.add_argument("--dry-run", action="store_true",
                            help="Do everything, list problems and the verification, "
                                 "then roll back: nothing is written.")
        parser.add_argument("--skip-invalid", action="store_true",
                            help="Skip (and report) rows whose provider, class, trait, "
                                 "aggregate, consumer, project or user row is gone, and "
                                 "take a provider's root from its parent chain.")
        parser.add_argument("--batch-size", type=int, default=BATCH_SIZE,
                            help=f"Rows per read and write batch (default {BATCH_SIZE}).")

    def handle(self, *args, url, dry_run, skip_invalid, batch_size, **options):
        try:
            result = import_database(url, dry_run=dry_run, skip_invalid=skip_invalid,
                                     batch_size=batch_size, progress=_progress_stream())
        except UpstreamError as exc:
            raise CommandError(str(exc))
        if result.nothing_to_do:
            self.stdout.write("The target already holds exactly the source's data: "
                              "nothing to do.")
            return
        for line in result.problems.lines(skip_invalid):
            self.stdout.write(line)
        for line in verification_table(result.verification):
            self.stdout.write(line)
        for line in result.differences:
            self.stdout.write(line)
        if result.problems.stops_import(skip_invalid):
            raise CommandError(
                "the source has invalid rows (listed above); nothing was written. Fix them "
                "in Placement, or pass --skip-invalid to leave them out"
                if not result.problems.fatal else
                "the source has rows that cannot be imported (listed above); nothing was "
                "written")
        if result.differences or not all(equal for *_, equal in result.verification):
            raise CommandError("source and target differ after writing (listed above); "
                               "the import was rolled back")
        rate = result.rows / result.seconds if result.seconds else 0
        if dry_run:
            self.stdout.write(self.style.SUCCESS(
                f"Dry run: {result.rows} rows would be imported; nothing was written."))
        else:
            self.stdout.write(self.style.SUCCESS(
                f"Imported {result.rows} rows in {result.seconds:.1f} s ({rate:.0f} rows/s)."))


def _progress_stream():
    """Progress bars go to the terminal only (logs and tests get the final table)."""
    return sys.stderr if sys.stderr.isatty() else None
