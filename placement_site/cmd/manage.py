"""placement-manage: Placement 16.0.0's `placement-manage`, sub-command for sub-command.

  placement-manage [--config-file PATH] [--config-dir DIR] [--version]
                   db {sync | version | stamp VERSION | online_data_migrations [--max-count N]}

Exit codes are Placement's: 0 done; online_data_migrations 1 when --max-count stopped
it with work left, 2 when a migration failed, 127 for a bad --max-count. `db stamp` is
refused (exit 1): the schema is Django's migrations, which `db sync` applies.
"""
import sys

from oslo_config import cfg
from prettytable import PrettyTable

from placement_site.cmd import CommandError, run, start

PROG = "placement-manage"
# Our apps whose migrations make the schema `db version` reports.
SCHEMA_APPS = ("providers", "allocations")
# (name, function(max_count) -> (found, done)) of the online data migrations; none yet:
# every data change ships as a Django migration that `db sync` applies.
ONLINE_MIGRATIONS = ()
BATCH = 50


def db_sync(conf):
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    return 0


def db_version(conf):
    from django.db import connection
    from django.db.migrations.recorder import MigrationRecorder

    recorder = MigrationRecorder(connection)
    applied = recorder.applied_migrations() if recorder.has_table() else {}
    latest = {app: max((name for a, name in applied if a == app), default=None)
              for app in SCHEMA_APPS}
    versions = [f"{app} {name}" for app, name in latest.items() if name]
    print(", ".join(versions) if versions else "None")
    return 0


def db_stamp(conf):
    raise CommandError(
        "db stamp: not supported: the schema is versioned by Django migrations; run "
        "`placement-manage db sync` (a Placement database is imported with "
        "`placement-django-admin import_placement_db URL`)")


def db_online_data_migrations(conf):
    max_count = conf.command.max_count
    if max_count is not None:
        try:
            max_count = int(max_count)
        except ValueError:
            max_count = 0
        if max_count < 1:
            print("Must supply a positive value for max_count")
            return 127
        limited = True
    else:
        max_count, limited = BATCH, False
        print(f"Running batches of {max_count} until complete")
    totals = {name: [0, 0] for name, _ in ONLINE_MIGRATIONS}
    failed = False
    while True:
        ran = 0
        for name, migrate in ONLINE_MIGRATIONS:
            try:
                found, done = migrate(max_count - ran)
            except Exception as exc:  # reported, as Placement does, and the rest go on
                print(f"Error attempting to run {name}: {exc}")
                failed, found, done = True, 0, 0
            totals[name][0] += found
            totals[name][1] += done
            ran += done
            if ran >= max_count:
                break
        if limited or not ran:
            break
    table = PrettyTable(["Migration", "Total Found", "Completed"])
    for name, (found, done) in totals.items():
        table.add_row([name, found, done])
    print(table)
    if failed and not (limited and ran):
        print("Some migrations failed unexpectedly. Check log for details.")
        return 2
    return 1 if ran else 0


def add_db_parsers(subparsers):
    subparsers.required = False  # no command: the help and exit 1, as Placement's
    db = subparsers.add_parser("db")
    db.set_defaults(action=lambda conf: db.print_help())
    commands = db.add_subparsers(description="database commands")
    for name, action, text in (
            ("sync", db_sync, "Sync the database to the current version."),
            ("version", db_version, "Report the current database version."),
            ("stamp", db_stamp, "Stamp the revision table with the given version."),
            ("online_data_migrations", db_online_data_migrations,
             "Run the online data migrations.")):
        parser = commands.add_parser(name, help=text, description=text)
        parser.set_defaults(action=action)
        if name == "stamp":
            parser.add_argument("version", help="the version to stamp")
        if name == "online_data_migrations":
            parser.add_argument("--max-count", metavar="<number>",
                                help="Maximum number of objects to consider")


def main(argv=None):
    command = cfg.SubCommandOpt("db", dest="command", title="Command",
                                help="Available DB commands", handler=add_db_parsers)
    conf = start(PROG, sys.argv[1:] if argv is None else argv,
                 lambda conf: conf.register_cli_opt(command))
    try:
        action = conf.command.action
    except (cfg.NoSuchOptError, AttributeError):
        conf.print_help()
        raise SystemExit(1)
    run(PROG, lambda: action(conf))
