"""The development login admin/admin (`manage.py ensure_admin`, which scripts/serve
runs): warned about loudly at every start, and the start refused when the server also
listens beyond loopback, unless [django] allow_development_login says so."""
import ipaddress
import logging

from django.conf import settings
from django.db import DatabaseError, connections

from foundation import config

LOG = logging.getLogger(__name__)
USERNAME = PASSWORD = "admin"  # ensure_admin's defaults


def works():
    """Does admin/admin log in? (One password hash: start-up only.)"""
    from django.contrib.auth import get_user_model

    try:
        user = get_user_model().objects.filter(username=USERNAME, is_active=True).first()
        return user is not None and user.check_password(PASSWORD)
    except DatabaseError:  # not migrated yet: nobody can log in
        return False
    finally:
        connections.close_all()  # the gunicorn master forks its workers after this


def is_loopback(bind):
    """A gunicorn bind address (HOST:PORT, [IPV6]:PORT, HOST, unix:PATH, fd://N)
    reachable from this machine only?"""
    if bind.startswith(("unix:", "fd://")):
        return True
    if bind.startswith("["):
        host = bind[1:bind.index("]")]
    else:
        host = bind.rsplit(":", 1)[0] if bind.count(":") == 1 else bind
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def check_at_start(binds):
    if not works():
        return
    exposed = [bind for bind in binds if not is_loopback(bind)]
    if exposed and not settings.PLACEMENT_ALLOW_DEVELOPMENT_LOGIN:
        config.stop(config.ConfigError(
            f"the development login {USERNAME}/{PASSWORD} works and the server would "
            f"listen on {', '.join(exposed)}: change its password (python manage.py "
            f"changepassword {USERNAME}) or set [django] allow_development_login = true"))
    LOG.warning("THE DEVELOPMENT LOGIN %s/%s WORKS: whoever reaches /admin/ or /ui/ is a "
                "superuser; change its password (python manage.py changepassword %s)",
                USERNAME, PASSWORD, USERNAME)
