"""placement-status: Placement 16.0.0's `placement-status upgrade check [--json]`.

The checks are allocations.status_checks' (the operator UI's status page runs the same);
oslo.upgradecheck parses the sub-command, prints its table (or JSON) and gives its exit
codes: 0 success, 1 warning, 2 failure, 255 error.
"""
import sys

from oslo_upgradecheck import upgradecheck

from placement_site.cmd import start

PROG = "placement-status"
ERROR = 255  # oslo.upgradecheck's code for a check that could not run


class Checks(upgradecheck.UpgradeCommands):
    """Each of our status checks as an upgrade check of the same title."""

    @property
    def _upgrade_checks(self):
        from allocations import status_checks

        return tuple((title, _as_upgrade_check(check))
                     for title, check in status_checks.CHECKS)


def _as_upgrade_check(check):
    def upgrade_check(commands):
        result = check()
        details = result.details
        if result.examples:
            details += " (" + "; ".join(str(example) for example in result.examples) + ")"
        if result.advice and result.code != upgradecheck.Code.SUCCESS:
            details += f" Advice: {result.advice}"
        return upgradecheck.Result(result.code, details)
    return upgrade_check


def main(argv=None):
    checks = Checks()
    conf = start(PROG, sys.argv[1:] if argv is None else argv,
                 lambda conf: upgradecheck.register_cli_options(conf, checks), ERROR)
    upgradecheck.CONF = conf  # where its check() looks for --json
    raise SystemExit(upgradecheck.run(conf))
