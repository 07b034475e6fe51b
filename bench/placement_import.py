"""How fast import_placement_db runs here.

Usage::

    python -m bench placement_import URL [--batch-size N] [--keep]

Imports the Placement database at URL (see ``python -m bench placement_db``) into
this empty database exactly as import_placement_db does, verification included, then
rolls back (--keep commits). Reports rows, seconds, rows/s and the peak memory.
"""
import os
import resource
import sys

from django.db import connection

from allocations.upstream import UpstreamError
from allocations.upstream.importer import BATCH_SIZE, import_database
from bench import BenchError

HELP = "import a Placement database like import_placement_db and report rows/s"


def add_arguments(parser):
    parser.add_argument("url", metavar="URL")
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    parser.add_argument("--keep", action="store_true",
                        help="Commit the imported data instead of rolling back.")


def run(options, out):
    batch_size, keep = options.batch_size, options.keep
    try:
        result = import_database(options.url, batch_size=batch_size, keep=keep,
                                 progress=sys.stderr if sys.stderr.isatty() else None)
    except UpstreamError as exc:
        raise BenchError(str(exc))
    if result.nothing_to_do:
        raise BenchError("the target already holds this data; benchmark into an "
                         "empty database")
    if result.problems.stops_import(False) or result.differences:
        raise BenchError("the import did not verify; run import_placement_db --dry-run")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.write(f"target {connection.vendor}, batch size {batch_size}, {os.cpu_count()} CPU(s), "
              f"load average {os.getloadavg()[0]:.2f}\n")
    for table, rows in result.written.items():
        out.write(f"{table:30} {rows:>10}\n")
    out.write(f"{result.rows} rows in {result.seconds:.1f} s ({result.write_seconds:.1f} s "
              f"reading and writing, {result.seconds - result.write_seconds:.1f} s verifying): "
              f"{result.rows / result.seconds:.0f} rows/s, peak memory {peak_mb:.0f} MB"
              + ("" if keep else " (rolled back)") + "\n")
