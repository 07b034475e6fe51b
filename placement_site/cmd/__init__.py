"""The console scripts an installed package gives (pyproject.toml [project.scripts]).

Each reads placement.conf through oslo.config like Placement's own commands:
`--config-file PATH` / `--config-dir DIR` on the command line, else placement.conf in
OS_PLACEMENT_CONFIG_DIR (default /etc/placement). A bad configuration, an unreachable
database or a refused operation ends the command with one line on stderr and a non-zero
exit, never a traceback.
"""
import os
import sys

from django.db import DatabaseError

from foundation import config

from placement_site import __version__

# Exit status of a command that could not run (configuration, database): oslo.config's
# own parse errors exit 2 as argparse does; Placement's commands let the rest raise.
FAILED = 1


class CommandError(Exception):
    """A refusal, told in one line."""


def fail(prog, message, status=FAILED):
    sys.stderr.write(f"{prog}: {' '.join(str(message).split())}\n")
    raise SystemExit(status)


def start(prog, argv, register_cli, failed=FAILED, needs_database=True):
    """Parse the command line (its options registered by `register_cli(conf)`) and
    placement.conf, start Django on that configuration and (unless not `needs_database`)
    check the database answers; return the oslo.config object (its sub-command is
    `conf.command`). Failures exit with status `failed`."""
    try:
        conf = config.load(args=argv, register_cli=register_cli, prog=prog,
                           version=__version__)
    except config.ConfigError as exc:
        fail(prog, f"configuration error: {exc}", failed)
    config.install(conf)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")
    import django

    django.setup()
    if not needs_database:
        return conf
    from django.db import connection

    try:
        connection.ensure_connection()
    except DatabaseError as exc:
        fail(prog, f"cannot reach the database: {exc}", failed)
    return conf


def run(prog, action):
    """Run `action()` and exit with its status; a database or command error is one line."""
    try:
        status = action()
    except CommandError as exc:
        fail(prog, exc)
    except DatabaseError as exc:
        fail(prog, f"database error: {exc}")
    raise SystemExit(status or 0)
