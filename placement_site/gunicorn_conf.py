"""gunicorn's configuration: `gunicorn --config python:placement_site.gunicorn_conf …`
(gunicorn.conf.py in the project directory, read when gunicorn starts there, is the same).

- gunicorn's own threaded worker behind nginx (placement-api, serve.py): nginx reads
  whole requests, refuses malformed ones with Placement's JSON body and holds slow
  clients, so gunicorn only ever sees whole, well-formed requests on a private unix
  socket. Served any other way (a TCP bind: plain `gunicorn placement_site.wsgi`), the
  master warns at start: a request gunicorn cannot parse then gets its HTML error, and a
  client that sends slowly holds a thread. The request body rule (request_body.py) holds
  either way. Request line and header limits match nginx's, and idle keep-alive
  connections are kept longer than clients wait between requests. Command-line flags
  still override each.

- Each worker bounds its database connections and closes idle ones
  (foundation/db_pool.py, [placement_database] max_pool_size, conn_max_idle).
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

from foundation.front_door import REQUEST_LINE_LIMIT

worker_class = "gthread"
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
    exposed = [bind for bind in server.cfg.bind if not bind.startswith("unix:")]
    if exposed:
        server.log.warning(
            "gunicorn serves %s without the front door: malformed requests get gunicorn's "
            "HTML errors and slow clients hold threads; in production run placement-api "
            "(nginx in front, docs/operators/front-door.md)", ", ".join(exposed))
    directory = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name.endswith(".db"):  # prometheus-client's value files, nothing else
            os.remove(os.path.join(directory, name))

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")
    import django

    django.setup()  # settings.py stops the start on a bad configuration value
    from foundation.api import policy

    policy.check_at_start()
    from foundation import db_routing

    db_routing.check_at_start()
    from foundation.api import auth

    auth.check_at_start()
    from foundation import development_login

    development_login.check_at_start(server.cfg.bind)
    # The check imported the metrics in the master: its gauges must not read as a worker.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(os.getpid())


def post_worker_init(worker):
    from django.conf import settings

    from foundation import db_pool
    from foundation.ops import collector, metrics

    # A served process holds a bounded number of connections and gives idle ones back.
    db_pool.serve(**settings.PLACEMENT_DB_POOL)
    metrics.worker_started()
    collector.freeze_startup_objects()


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
