"""manage.py placement_status: upgrade and health checks of the Placement data.

The checks live in allocations.status_checks (the operator UI's status page
runs the same ones); this command prints each result with its advice. The
exit status is the worst result: 0 success, 1 warning, 2 failure (like
`placement-status upgrade check`).
"""
from django.core.management.base import BaseCommand

from allocations.status_checks import (
    FAILURE, RESULT_NAMES, SUCCESS, WARNING, run_checks,
)


class Command(BaseCommand):
    help = (
        "Run upgrade/health checks on the Placement database and print each check's "
        "result (Success, Warning, Failure) with advice. Checks: consumers missing "
        "project/user, allocations without inventory, inconsistent provider tree "
        "fields, usage over capacity, missing standard traits/resource classes. "
        "Exit status: 0 all succeeded, 1 worst is a warning, 2 a failure."
    )

    def handle(self, *args, **options):
        results, worst = run_checks()
        styles = {SUCCESS: self.style.SUCCESS, WARNING: self.style.WARNING,
                  FAILURE: self.style.ERROR}
        for title, result in results:
            self.stdout.write(f"Check: {title}")
            self.stdout.write("  Result: " + styles[result.code](result.name))
            self.stdout.write(f"  Details: {result.details}")
            for example in result.examples:
                self.stdout.write(f"    - {example}")
            if result.advice and result.code != SUCCESS:
                self.stdout.write(f"  Advice: {result.advice}")
            self.stdout.write("")
        self.stdout.write(f"Overall: {RESULT_NAMES[worst]}")
        if worst != SUCCESS:
            raise SystemExit(worst)
