"""The WSGI application (gunicorn placement_site.wsgi:application).

With `[api] auth_strategy = keystone` Django sits behind keystonemiddleware's auth_token,
configured from [keystone_authtoken]. Its decision is always delayed: requests without a
valid token go on to Django, which answers 401 in Placement's form (the root document
needs no token), and only the token auth_token validated identifies the caller.
"""
import logging
import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application


os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")


def build_application():
    """Django's WSGI application, checked (policy file, replica routes: a bad one stops
    the start with one line, also without gunicorn_conf's on_starting) and, in keystone
    mode, behind auth_token."""
    application = get_wsgi_application()
    from placement_site import db_routing  # these need the settings loaded
    from placement_site.api import policy

    policy.check_at_start()
    db_routing.check_at_start()
    from placement_site import __version__

    logging.getLogger("placement").info(
        "placement-django %s: configuration %s", __version__,
        ", ".join(settings.CONF.config_file) or "(none: defaults and environment)")
    if settings.PLACEMENT_AUTH_STRATEGY == "keystone":
        application = keystone_protected(application)
    return application


def keystone_protected(application):
    from keystonemiddleware import auth_token

    return auth_token.AuthProtocol(
        application, {"oslo_config_config": settings.CONF, "delay_auth_decision": True})


application = build_application()
