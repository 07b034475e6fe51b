"""Serve the API the production way: nginx at the front door, gunicorn behind it.

    placement-api --bind 0.0.0.0:8778 --workers 4 --threads 4
    python -m placement_site.serve …    (the same, from a checkout)

nginx (Debian's package) takes the clients: it reads whole requests itself (a client
that sends slowly or stops half-way holds a socket in nginx, never a gunicorn thread),
refuses what is too large or too slow with Placement's JSON error body, and keeps idle
keep-alive connections longer than clients wait between requests. gunicorn
(gunicorn_conf.py: its own threaded worker) listens on a private unix socket and gets only
whole requests. This process starts both and stops the other when one exits.

Never a replayed write: nginx makes one attempt per request (proxy_next_upstream off)
on a fresh connection to gunicorn (no upstream keep-alive: a kept connection that its
worker closes would be a failed attempt), so a client's answer is about its own attempt.
A worker that dies mid-request gets its client a 503 saying a write may or may not have
been applied; the client reads it back, as nova does.

Signals: SIGHUP reloads gunicorn only (new workers, the old ones finish what they have
accepted: gunicorn_worker.py); nginx's configuration never changes while it runs, and
reloading it would close its clients' idle connections. SIGTERM/SIGINT stop nginx
gracefully first (it stops listening and waits for its requests' answers), then
gunicorn, so no request in flight is dropped.

Liveness (/healthz, when public) is nginx's own answer: it must not wait behind busy
threads. /readyz goes to gunicorn with a short read timeout; no answer is "not ready".

The limits (docs/operators/front-door.md): the request body is at most
`[api] max_request_body_size` (413); a request line or one header line at most
HEADER_BUFFER bytes (400); a client has CLIENT_TIMEOUT seconds for its request headers
and between two reads of its body; an idle keep-alive connection is kept KEEPALIVE seconds.
"""
import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from foundation import config
from placement_site.cmd import fail
from foundation.front_door import HEADER_BUFFER, REQUEST_START_HEADER

PROG = "placement-api"

CLIENT_TIMEOUT = 30
READINESS_TIMEOUT = 5  # seconds /readyz may wait for a thread before it says not ready
RETRY_AFTER = 5
KEEPALIVE = 75  # clients (keystoneauth, the CLI) reuse connections after pauses of seconds
# nginx's own refusals, each in Placement's error body: status -> detail
_NGINX_ERRORS = {
    400: "$placement_bad_request",  # the map in nginx_conf
    413: "The request body is larger than {limit} bytes, the largest accepted.",
    500: "The front door failed.",
    # a worker died or could not be reached: a read is safe to repeat, a write unknown
    502: ("The API service stopped while handling this request. A read can be retried; "
          "a write may or may not have been applied: read it back before retrying."),
    503: "The API service is not answering.",
    504: "The API service took too long to answer; nothing is committed after this "
         "answer, but read back what this request changes before retrying it.",
}

# 414 (request line too large) and 494 (header too large) are nginx's 400s; Placement says 400
_ERROR_PAGES = {400: "400 414 494", 413: "413", 500: "500", 502: "502", 503: "503",
                504: "504"}
# Answered with another status: an upstream that failed is unavailable (Retry-After).
_ANSWERED_AS = {502: 503}
_MALFORMED = "The request line or a header is too large, or the request is malformed."
_REQUEST_ID = "@REQUEST_ID@"
# Where nginx finds its error pages (a named location cannot answer a request line it
# could not parse); internal, a client cannot reach them
_ERROR_PATH = "/.placement-front-door-error/"


def _error_location(status, limit):
    from foundation.api.errors import error_body

    detail = _NGINX_ERRORS[status].format(limit=limit)
    answered = _ANSWERED_AS.get(status, status)
    text = json.dumps(error_body(answered, detail, _REQUEST_ID))
    # nginx's quoted strings: backslashes and quotes escaped; the request id is a variable
    text = text.replace("\\", "\\\\").replace("'", "\\'")
    text = text.replace(_REQUEST_ID, "$placement_request_id")
    retry = (f"      add_header Retry-After {RETRY_AFTER} always;\n"
             if answered == 503 else "")
    return (f"    location = {_ERROR_PATH}{status} {{\n"
            f"      internal;\n"
            f"      add_header x-openstack-request-id $placement_request_id always;\n"
            f"{retry}"
            f"      return {answered} '{text}';\n"
            f"    }}\n")


_PROXY = f"""      proxy_pass http://placement;
      proxy_http_version 1.1;
      proxy_set_header Connection close;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $placement_forwarded_proto;
      proxy_next_upstream off;
      proxy_set_header {REQUEST_START_HEADER} $msec;
"""


_PAGE_GZIP = """      gzip on;
      gzip_comp_level 5;
      gzip_min_length 1024;
      gzip_proxied any;
      gzip_vary on;
      gzip_types text/css text/csv text/javascript application/javascript
                 application/json image/svg+xml;
"""


def _probe_locations(public_paths):
    """/healthz answered by nginx itself; /readyz with a short wait for a thread."""
    if "/healthz" not in public_paths:
        return ""
    ready = json.dumps({"status": "not ready", "checks": {
        "api": f"failed: no worker thread answered within {READINESS_TIMEOUT} s"}})
    return f"""    location = /healthz {{
      add_header Cache-Control no-store always;
      add_header x-openstack-request-id $placement_request_id always;
      return 200 '{{"status": "ok"}}';
    }}
    location = /readyz {{
{_PROXY}      proxy_read_timeout {READINESS_TIMEOUT}s;
      proxy_intercept_errors off;
      error_page 502 503 504 = @not_ready;
    }}
    location @not_ready {{
      add_header Cache-Control no-store always;
      return 503 '{ready}';
    }}
"""


def nginx_conf(run_dir, bind, max_body, access_log=False, workers="auto",
               read_timeout=120, public_paths=("/healthz",)):
    """nginx's configuration: listen on `bind`, pass to gunicorn's socket in run_dir."""
    from foundation.api.errors import CONTENT_LENGTH_NOT_INTEGER

    user = "user nobody nogroup;\n" if os.geteuid() == 0 else ""
    error_pages = "".join(f"    error_page {codes} ={_ANSWERED_AS.get(status, status)} "
                          f"{_ERROR_PATH}{status};\n"
                          for status, codes in _ERROR_PAGES.items())
    locations = "".join(_error_location(status, max_body) for status in _NGINX_ERRORS)
    temp = "".join(f"  {kind}_temp_path {run_dir}/{kind};\n"
                   for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    log = ("  access_log /dev/stdout placement;\n" if access_log else "  access_log off;\n")
    return f"""# written by placement_site/serve.py for this run
daemon off;
{user}worker_processes {workers};
pid {run_dir}/nginx.pid;
error_log stderr error;
events {{ worker_connections 4096; }}
http {{
{temp}  log_format placement '$remote_addr "$request" $status $body_bytes_sent '
                       '$request_time $placement_request_id';
{log}  server_tokens off;
  # Requests: whole before they go on; bodies beyond 1 MB wait in a file, not in memory.
  client_max_body_size {max_body};
  client_body_buffer_size 1m;
  client_header_buffer_size 1k;
  large_client_header_buffers 4 {HEADER_BUFFER};
  client_header_timeout {CLIENT_TIMEOUT}s;
  client_body_timeout {CLIENT_TIMEOUT}s;
  send_timeout {CLIENT_TIMEOUT}s;
  reset_timedout_connection on;
  keepalive_timeout {KEEPALIVE}s;
  keepalive_requests 10000;
  # Placement's request id form, req-<uuid>, from nginx's 32 hex digits
  map $request_id $placement_request_id {{
    "~^(.{{8}})(.{{4}})(.{{4}})(.{{4}})(.{{12}})$" "req-$1-$2-$3-$4-$5";
  }}
  # Which 400: Placement's words for a Content-Length that is not a number
  map $http_content_length $placement_bad_request {{
    default "{CONTENT_LENGTH_NOT_INTEGER}";
    "" "{_MALFORMED}";
    "~^[0-9]+$" "{_MALFORMED}";
  }}
  # A TLS proxy in front of this one says the scheme; otherwise it is this one's
  map $http_x_forwarded_proto $placement_forwarded_proto {{
    default $http_x_forwarded_proto;
    "" $scheme;
  }}
  # An answer is read from gunicorn into memory up to 2 MB (a flat 1,000-host answer at
  # limit=1000 is 470 kB), not written to a temporary file past 64 kB: the worker's
  # thread is free as soon as its answer is read, without a disk write per answer.
  proxy_buffer_size 16k;
  proxy_buffers 128 16k;
  proxy_busy_buffers_size 64k;
  # No keepalive: a kept connection closed by its worker (a reload, a restart) would
  # fail a request no worker saw, and retrying it could replay a write.
  upstream placement {{
    server unix:{run_dir}/gunicorn.sock;
  }}
  server {{
    listen {bind};
    default_type application/json;
{error_pages}    location / {{
{_PROXY}      proxy_read_timeout {read_timeout}s;
    }}
    # The operator pages, their static files, JSON and CSV compressed when the browser
    # asks (front-door.md, "Compression", weighs BREACH); the API's answers are not.
    location ~ ^/(ui|admin|static)/ {{
{_PROXY}      proxy_read_timeout {read_timeout}s;
{_PAGE_GZIP}    }}
{_probe_locations(public_paths)}{locations}  }}
}}
"""


def _die_with_parent():
    """Children end when this process dies, even by SIGKILL (Linux's PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog=PROG, description="Serve Placement: nginx in front of gunicorn.")
    parser.add_argument("--bind", default="127.0.0.1:8778",
                        help="HOST:PORT nginx listens on (default %(default)s)")
    parser.add_argument("--workers", type=int,
                        help="gunicorn worker processes (default: [api] workers)")
    parser.add_argument("--threads", type=int,
                        help="threads per worker (default: [api] threads)")
    parser.add_argument("--timeout", type=int, default=30,
                        help="gunicorn's worker timeout, seconds")
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--access-log", action="store_true",
                        help="write one line per request to stdout (nginx's)")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx",
                        help="the nginx binary (default %(default)s)")
    return parser.parse_args(argv)


def main(argv=None):
    args = _parse(argv)
    try:
        conf = config.load()
    except config.ConfigError as exc:
        fail(PROG, f"configuration error: {exc}")
    args.workers = args.workers or conf.api.workers
    args.threads = args.threads or conf.api.threads
    if not os.access(args.nginx, os.X_OK):
        fail(PROG, f"no nginx at {args.nginx} (apt-get install nginx)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")
    run_dir = tempfile.mkdtemp(prefix="placement-serve-")
    os.chmod(run_dir, 0o711)  # nginx's workers (nobody when started as root) reach the socket
    conf_path = os.path.join(run_dir, "nginx.conf")
    with open(conf_path, "w") as handle:
        handle.write(nginx_conf(run_dir, args.bind, conf.api.max_request_body_size,
                                access_log=args.access_log,
                                read_timeout=conf.api.request_timeout,
                                public_paths=conf.django.public_paths))
    socket_path = os.path.join(run_dir, "gunicorn.sock")
    children = []
    asked_to_stop = []

    def on_stop(signum, frame):
        asked_to_stop.append(signum)

    def on_reload(signum, frame):
        if children and children[0].poll() is None:   # gunicorn only (module docstring)
            children[0].send_signal(signal.SIGHUP)

    def running():
        return not asked_to_stop and all(child.poll() is None for child in children)

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGHUP, on_reload)
    try:
        children.append(subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "placement_site.wsgi:application",
             "--config", "python:placement_site.gunicorn_conf",
             "--bind", f"unix:{socket_path}", "--workers", str(args.workers),
             "--threads", str(args.threads), "--timeout", str(args.timeout),
             "--worker-class", "placement_site.gunicorn_worker.DrainingThreadWorker",
             # a reload lets the old workers finish what the front door still waits for
             "--graceful-timeout", str(conf.api.request_timeout),
             "--log-level", args.log_level], preexec_fn=_die_with_parent))
        while running() and not os.path.exists(socket_path):  # nginx once gunicorn listens
            time.sleep(0.05)
        if running():
            children.append(subprocess.Popen(
                [args.nginx, "-p", run_dir, "-c", conf_path, "-e", "stderr"],
                preexec_fn=_die_with_parent))
        while running():
            time.sleep(0.2)
    finally:
        _stop(children, conf.api.request_timeout + 5)
        shutil.rmtree(run_dir, ignore_errors=True)
    if asked_to_stop:
        return 0
    return next(child.returncode for child in children if child.returncode) or 1


def _stop(children, grace):
    """Stop nginx gracefully (SIGQUIT: no new requests, the ones in flight answered),
    then gunicorn (SIGTERM: graceful); SIGKILL to any still there after `grace` s."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # stopping already: once is enough
    for child, signum in reversed(list(zip(children, (signal.SIGTERM, signal.SIGQUIT)))):
        if child.poll() is None:
            child.send_signal(signum)
        try:
            child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


if __name__ == "__main__":
    sys.exit(main())
