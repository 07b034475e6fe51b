"""gunicorn's configuration: `gunicorn --config python:placement_site.gunicorn_conf …`
(gunicorn.conf.py in the project directory, read when gunicorn starts there, is the same).

- The safe set-up is the default, so plain `gunicorn placement_site.wsgi:application`
  runs it: Placement's worker class (gunicorn_worker.py: JSON for what gunicorn refuses,
  bounded socket reads), request line and header limits that match nginx's in serve.py,
  and idle keep-alive connections kept longer than clients wait between requests.
  Command-line flags still override each.

- The master checks placement.conf and the policy file once before it forks, so that a
  bad value stops the start with one line naming the option (each worker failing on its
  own ends in gunicorn tracebacks).
- Prometheus multiprocess mode: workers share PROMETHEUS_MULTIPROC_DIR; each writes its
  metric values to files there and a scrape sums them. The directory must be empty when
  the server starts (values of an earlier run would be added in) and a dead worker's live
  gauges must be dropped. Without PROMETHEUS_MULTIPROC_DIR in the environment a fresh
  temporary directory is used; set it to a tmpfs path in production.
"""
import os
import tempfile

from placement_site.front_door import REQUEST_LINE_LIMIT

worker_class = "placement_site.gunicorn_worker.PlacementThreaded"
threads = 4
timeout = 30
keepalive = 75
limit_request_line = REQUEST_LINE_LIMIT
limit_request_field_size = REQUEST_LINE_LIMIT

# Set here, in the master, before any worker imports prometheus_client.
# A necessary exception to "only config.py touches the environment": prometheus-client reads it.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR",
                      tempfile.mkdtemp(prefix="placement-prometheus-"))


def on_starting(server):
    directory = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name.endswith(".db"):  # prometheus-client's value files, nothing else
            os.remove(os.path.join(directory, name))

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")
    import django

    django.setup()  # settings.py stops the start on a bad configuration value
    from placement_site.api import policy

    policy.check_at_start()
    from placement_site import db_routing

    db_routing.check_at_start()
    from placement_site.api import auth

    auth.check_at_start()
    from placement_site import development_login

    development_login.check_at_start(server.cfg.bind)
    # The check imported the metrics in the master: its gauges must not read as a worker.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(os.getpid())


def post_worker_init(worker):
    from placement_site.ops import collector, metrics

    metrics.worker_started()
    collector.freeze_startup_objects()


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
