"""placement-django-admin: every other command of the service (import_placement_db,
export_placement_db, reshape, load_sample, ensure_admin, prune_change_log, config_sample,
policy_sample, Django's own ...), as `manage.py` runs them in a checkout, configured like
placement-manage: `placement-django-admin [--config-file PATH] [--config-dir DIR]
<command> [options]`.
"""
import argparse
import sys

from placement_site.cmd import start

PROG = "placement-django-admin"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    # Only the leading configuration options are ours; the rest is Django's command line.
    ours = argparse.ArgumentParser(add_help=False)
    ours.add_argument("--config-file", action="append", default=[])
    ours.add_argument("--config-dir", action="append", default=[])
    known, rest = ours.parse_known_args(argv)
    config_args = [*(arg for path in known.config_file for arg in ("--config-file", path)),
                   *(arg for path in known.config_dir for arg in ("--config-dir", path))]
    # Django's commands reach the database themselves, when they need it.
    start(PROG, config_args, lambda conf: None, needs_database=False)
    from django.core.management import execute_from_command_line

    execute_from_command_line([PROG, *rest])
