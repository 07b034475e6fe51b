"""Development convenience: make sure someone can log in to /admin/ and /ui/.

Creates the superuser admin/admin (or --username/--password) only when no
superuser exists yet, so running it again, or on a real deployment that
already has its own administrators, changes nothing. Change the password
(or create real accounts with `createsuperuser`) before exposing the site: while
admin/admin logs in, gunicorn refuses to listen beyond loopback
(foundation/development_login.py).
"""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = ("Development convenience: create superuser admin/admin if there is no "
            "superuser yet (idempotent).")

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password", default="admin")
        parser.add_argument("--email", default="admin@example.invalid")

    def handle(self, *args, username, password, email, **options):
        user_model = get_user_model()
        if user_model.objects.filter(is_superuser=True).exists():
            self.stdout.write("A superuser already exists; nothing to do.")
            return
        user = user_model.objects.filter(username=username).first()
        if user is None:
            user_model.objects.create_superuser(username=username, email=email, password=password)
            self.stdout.write(self.style.WARNING(
                f"Created superuser {username!r} with password {password!r} "
                "(development convenience: change it before exposing the site)."))
            return
        # An ordinary account already has that name: promote it, keep its password.
        user.is_staff = user.is_superuser = True
        user.save(update_fields=["is_staff", "is_superuser"])
        self.stdout.write(self.style.WARNING(f"Promoted existing user {username!r} to superuser."))
