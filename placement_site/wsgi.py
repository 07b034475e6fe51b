"""The WSGI application (gunicorn placement_site.wsgi:application).

With `[api] auth_strategy = keystone` keystonemiddleware's auth_token, configured from
[keystone_authtoken], validates every API request but the root document's; it runs
inside Django (api.middleware.PlacementAuthMiddleware), so that its 401 and 503 answers
carry the request id and are measured like every other answer.
"""
import logging
import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")

from foundation.request_body import bounded_body  # noqa: E402 (needs the settings module)


def build_application():
    """Django's WSGI application, checked (policy file, replica routes, in keystone mode
    [keystone_authtoken]: a bad one stops the start with one line, also without
    gunicorn_conf's on_starting)."""
    application = get_wsgi_application()
    from foundation import db_routing  # these need the settings loaded
    from foundation.api import auth, policy

    policy.check_at_start()
    db_routing.check_at_start()
    auth.check_at_start()
    from placement_site import __version__

    logging.getLogger("placement").info(
        "placement-django %s: configuration %s", __version__,
        ", ".join(settings.CONF.config_file) or "(none: defaults and environment)")
    return application


# Outermost: the body limit holds before any other layer reads a byte (request_body.py).
application = bounded_body(build_application())
