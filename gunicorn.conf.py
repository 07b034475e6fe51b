"""gunicorn reads this file from the working directory. The master checks placement.conf
and the policy file once before it forks, so that a bad value stops the start with one
line naming the option (each worker failing on its own ends in gunicorn tracebacks)."""
import os


def on_starting(server):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")
    import django

    django.setup()  # settings.py stops the start on a bad configuration value
    from placement_site.api import policy

    policy.check_at_start()
    from placement_site import db_routing

    db_routing.check_at_start()
