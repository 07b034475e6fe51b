"""gunicorn reads this file when started in the project directory: the service's
gunicorn configuration, kept in placement_site/gunicorn_conf.py."""
from placement_site.gunicorn_conf import *  # noqa: F401,F403
