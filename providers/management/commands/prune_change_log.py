"""manage.py prune_change_log: delete change log entries past the retention period."""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from providers.services.change_log import change_log_prune


class Command(BaseCommand):
    help = (
        "Delete the change log entries older than [placement] change_log_retention_days "
        "(or --days). Every server process also does this at most once an hour after a "
        "write; run it from cron where writes are rare, or after lowering the option."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=None,
                            help="Keep this many days instead of the configured "
                                 f"{settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS} (0 keeps "
                                 "everything).")

    def handle(self, *args, days, **options):
        if days is not None and days < 0:
            raise CommandError("--days must be 0 or more")
        days = settings.PLACEMENT_CHANGE_LOG_RETENTION_DAYS if days is None else days
        if days == 0:
            self.stdout.write("Retention is 0 days (keep everything): nothing deleted.")
            return
        deleted = change_log_prune(days=days)
        self.stdout.write(f"Deleted {deleted} change log entries older than {days} days.")
