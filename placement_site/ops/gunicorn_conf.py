"""gunicorn configuration for Prometheus multiprocess mode (gunicorn --config
python:placement_site.ops.gunicorn_conf).

Workers share PROMETHEUS_MULTIPROC_DIR: each writes its metric values to files there
and a scrape sums them. The directory must be empty when the server starts (values of
an earlier run would be added in) and a dead worker's live gauges must be dropped.
Without PROMETHEUS_MULTIPROC_DIR in the environment a fresh temporary directory is
used; set it to a tmpfs path in production.
"""
import os
import tempfile

# Set here, in the master, before any worker imports prometheus_client.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR",
                      tempfile.mkdtemp(prefix="placement-prometheus-"))


def on_starting(server):
    directory = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name.endswith(".db"):  # prometheus-client's value files, nothing else
            os.remove(os.path.join(directory, name))


def post_worker_init(worker):
    from placement_site.ops import metrics

    metrics.worker_started()


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
