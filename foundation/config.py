"""The service's configuration: placement.conf (oslo.config) and environment variables.

Sources, later wins: option defaults, `placement.conf` in the configuration directory
(OS_PLACEMENT_CONFIG_DIR, default `/etc/placement`, as Placement's WSGI module reads it;
`policy.yaml` is looked for beside it), or instead the `--config-file`/`--config-dir`
given to a console script, then the file named by PLACEMENT_CONFIG_FILE, then the
environment variables of ENVIRONMENT.
Section and option names are Placement's own ([placement_database], [api], [placement],
[oslo_policy], [cors], [keystone_authtoken]); [django] holds the web framework's few.
This is the only module that reads the process environment; settings.py asks it.
"""
import os
import re
import secrets
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from keystonemiddleware import opts as authtoken_opts
from oslo_config import cfg
from oslo_middleware import cors, http_proxy_to_wsgi
from oslo_policy import opts as policy_opts

BASE_DIR = Path(__file__).resolve().parent.parent
# A git checkout (manage.py beside the packages) keeps its data under data/; an installed
# package keeps it where a system service does.
IN_CHECKOUT = (BASE_DIR / "manage.py").is_file()
DEFAULT_DATA_DIR = str(BASE_DIR / "data") if IN_CHECKOUT else "/var/lib/placement"
# Looked up by config_files() at each load(), so a test can point it elsewhere.
SYSTEM_CONFIG_DIR = "/etc/placement"
CONFIG_DIR_VARIABLE = "OS_PLACEMENT_CONFIG_DIR"
CONFIG_FILE_NAME = "placement.conf"
ZERO_UUID = "00000000-0000-0000-0000-000000000000"


# The operator endpoints (foundation.ops) besides [django] metrics_path. By default
# they answer without a token: probes cannot send one, and the API's description is
# public anyway; the metrics need one.
OPERATOR_PATHS = ("/healthz", "/readyz", "/openapi.json")


class ConfigError(Exception):
    """A configuration problem, told in one line that names the option."""


OPTIONS = {
    "placement_database": [
        cfg.StrOpt("connection", secret=True,
                   help="Database URL, SQLAlchemy style: mysql+pymysql://user:pass@host/db "
                        "(also mysql://; ?unix_socket=/path for a socket; the character "
                        "set is always utf8mb4), postgresql://user:pass@host:5432/db (also "
                        "postgresql+psycopg2://) or sqlite:///path (relative to the "
                        "working directory; sqlite:////abs/path). Default: a SQLite file "
                        "under the data directory."),
        cfg.IntOpt("conn_max_age", default=60, min=0,
                   help="Seconds a PostgreSQL or MySQL connection is kept for later requests."),
        cfg.StrOpt("mysql_driver", default="auto", choices=["auto", "mysqlclient", "pymysql"],
                   help="The MySQL/MariaDB driver, whatever the connection URL names "
                        "(mysql+pymysql:// included): auto takes mysqlclient (C, faster) "
                        "when it is installed, else PyMySQL (pure Python)."),
        # Time limits and the per-process pool (settings.database_limits, db_pool.py)
        cfg.FloatOpt("statement_timeout", default=30, min=0,
                     help="Seconds a statement may run before the database cancels it "
                          "(the request is answered 503 and nothing of it is applied); "
                          "below [api] request_timeout. 0: no limit."),
        cfg.FloatOpt("lock_timeout", default=10, min=0,
                     help="Seconds a statement may wait for a lock another writer "
                          "holds; then a write is answered 409 "
                          "placement.concurrent_update (a read 503) and nothing of it "
                          "is applied. "
                          "0: no limit."),
        cfg.FloatOpt("round_trip_timeout", default=40, min=0,
                     help="Seconds the service waits for one answer of the database "
                          "(or to send it a statement) before it drops the "
                          "connection: a database node that stopped answering "
                          "(frozen, cut off) costs a request at most this long, "
                          "then 503 (a commit's outcome is then looked up, up to "
                          "outcome_lookup_timeout more). Above statement_timeout, "
                          "below [api] request_timeout. MySQL: PyMySQL's "
                          "read_timeout and write_timeout. 0: no limit."),
        cfg.FloatOpt("outcome_lookup_timeout", default=10, min=0,
                     help="Seconds a request whose COMMIT lost its connection spends "
                          "finding out whether it was applied (reconnecting, then "
                          "PostgreSQL's txid_status or the change log's entry); when "
                          "it cannot, 503 \"may or may not have been applied\". "
                          "0: do not look."),
        cfg.FloatOpt("idle_in_transaction_timeout", default=60, min=0,
                     help="Seconds the database lets a session sit idle inside a "
                          "transaction (a frozen API process holding locks) before it "
                          "ends it and rolls it back: PostgreSQL's "
                          "idle_in_transaction_session_timeout, MariaDB's "
                          "idle_transaction_timeout (MySQL has none). 0: no limit."),
        cfg.IntOpt("max_pool_size", default=5, min=1,
                   help="Most connections a served process (a gunicorn worker) holds "
                        "to each database; a thread beyond it waits for one "
                        "(pool_timeout). Nodes x workers x min(threads, max_pool_size) "
                        "must stay below the database's max_connections "
                        "(placement-status upgrade check warns)."),
        cfg.FloatOpt("pool_timeout", default=10, min=0,
                     help="Seconds a request waits for a free connection of its "
                          "process before it is answered 503."),
        cfg.FloatOpt("conn_max_idle", default=10, min=0.5,
                     help="Seconds a served process keeps a connection no request "
                          "uses; then it is closed, so the database's sessions come "
                          "back after a burst of load."),
        cfg.IntOpt("api_nodes", default=1, min=1,
                   help="API nodes (placement-api machines) sharing this database: "
                        "only for the upgrade check's connection budget."),
        cfg.StrOpt("sqlite_test_name",
                   help="SQLite file the test suite creates (default: in memory)."),
        cfg.ListOpt("slave_connection", default=[], secret=True,
                    help="Read replica URLs (PostgreSQL streaming hot standbys, or MySQL "
                         "replicas, of connection), comma-separated. The read-only routes of "
                         "replica_read_routes are answered from a replica that is up and "
                         "not lagging; everything else uses connection."),
        cfg.FloatOpt("replica_max_lag", default=2.0, min=0,
                     help="Seconds a replica may lag behind the primary and still answer; "
                          "past it, or when it is down, the primary answers."),
        cfg.ListOpt("replica_read_routes",
                    default=["allocation_candidates", "resource_providers"],
                    help="Route templates (as in the route table, e.g. "
                         "resource_providers/<str:uuid>) whose GET requests may read "
                         "from a replica: reads that tolerate a little staleness."),
    ],
    "api": [
        cfg.StrOpt("auth_strategy", default="noauth2", choices=["noauth2", "keystone"],
                   help="noauth2: X-Auth-Token 'user[:project]', token 'admin' is an "
                        "administrator (development only). keystone: tokens validated by "
                        "keystonemiddleware's auth_token, configured in [keystone_authtoken]."),
        cfg.IntOpt("workers", default=2, min=1,
                   help="gunicorn worker processes placement-api starts (--workers "
                        "overrides)."),
        cfg.IntOpt("threads", default=4, min=1,
                   help="Threads per worker (--threads overrides)."),
        cfg.IntOpt("request_timeout", default=120, min=10,
                   help="Seconds the front door (nginx) waits for the API's answer "
                        "before it answers 504. A write not committed 5 s before then "
                        "is rolled back, so none lands after its client was told it "
                        "timed out."),
        cfg.IntOpt("max_request_body_size", default=16 * 1024 * 1024, min=1024,
                   help="Largest request body accepted, in bytes; a larger one is refused "
                        "with 413 before it is read (a reshaper body for a 2,000-provider "
                        "tree with 10 consumers each is about 9 MB)."),
    ],
    "placement": [
        cfg.BoolOpt("randomize_allocation_candidates", default=False,
                    help="Shuffle allocation candidates before the limit is applied."),
        cfg.IntOpt("max_allocation_candidates", default=-1, min=-1,
                   help="Cap on the allocation candidates returned (-1: unlimited)."),
        cfg.StrOpt("allocation_candidates_generation_strategy", default="depth-first",
                   choices=["depth-first", "breadth-first"],
                   help="depth-first: each root provider's candidates in turn; "
                        "breadth-first: one candidate per root provider in turn, so that "
                        "max_allocation_candidates spreads over more trees."),
        cfg.IntOpt("allocation_conflict_retry_count", default=10, min=0,
                   help="Internal retries of an allocation write that lost a generation "
                        "race to a concurrent writer."),
        cfg.StrOpt("incomplete_consumer_project_id", default=ZERO_UUID,
                   help="Project of consumers written before microversion 1.8."),
        cfg.StrOpt("incomplete_consumer_user_id", default=ZERO_UUID,
                   help="User of consumers written before microversion 1.8."),
        cfg.ListOpt("extensions", default=[],
                    item_type=cfg.types.String(choices=["root_member_of", "isolate"]),
                    help="Beyond Placement: parameters of GET /allocation_candidates that "
                         "Placement never shipped, served at microversion 1.40 "
                         "(docs/clients/extensions.md). Empty (the default): the API is "
                         "exactly Placement 1.39 and 1.40 does not exist."),
        cfg.IntOpt("change_log_retention_days", default=90, min=0,
                   help="Days the change log keeps an entry (who changed a provider, "
                        "consumer, class or trait, before -> after); older entries are "
                        "deleted at most once an hour per process and by `manage.py "
                        "prune_change_log`. 0 keeps every entry."),
    ],
    "django": [
        cfg.StrOpt("secret_key", secret=True,
                   help="Key signing the operator UI's sessions. Default: generated once "
                        "per installation and kept in <data_dir>/secret_key."),
        cfg.BoolOpt("debug", default=False, help="Django debug pages (never in production)."),
        cfg.ListOpt("allowed_hosts", default=["*"],
                    help="Host names the operator UI and admin answer to; the API serves "
                         "any Host header."),
        cfg.StrOpt("log_level", default="INFO",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
                   ignore_case=True, help="Root log level."),
        cfg.StrOpt("data_dir", default=DEFAULT_DATA_DIR,
                   help="Directory of the default SQLite database and generated secret "
                        "key (default: data/ in a checkout, /var/lib/placement when "
                        "installed as a package)."),
        cfg.StrOpt("log_format", default="text", choices=["text", "json"],
                   help="text: plain lines for development; json: one JSON object per "
                        "line (one per request) for log pipelines."),
        cfg.BoolOpt("compiled_engine", default=True,
                    help="Use the allocation-candidates engine's modules compiled by "
                         "Cython when a build of their current source exists "
                         "(candidates/compiled.py); false: always the plain Python."),
        cfg.StrOpt("metrics_path", default="/metrics", regex=r"^/",
                   help="Where Prometheus scrapes; outside Placement's routes."),
        cfg.ListOpt("public_paths", default=list(OPERATOR_PATHS),
                    help="Operator endpoints answered without a token: any of /healthz, "
                         "/readyz, /openapi.json and metrics_path. The others need a "
                         "token of an administrator (policy rule admin_api), as every "
                         "path but the root document does in Placement, which has no "
                         "/metrics. To let Prometheus scrape without a token, add "
                         "metrics_path here and restrict it at the proxy."),
        cfg.BoolOpt("allow_development_login", default=False,
                    help="Start even though the development login admin/admin (manage.py "
                         "ensure_admin) works and the server listens beyond loopback. "
                         "Otherwise such a start is refused; on loopback it is only "
                         "warned about."),
    ],
}

# Placement's CORS defaults on top of oslo.middleware's [cors] options.
CORS_DEFAULTS = {
    "allow_headers": ["X-Auth-Token", "X-Openstack-Request-Id", "X-Identity-Status",
                      "X-Roles", "X-Service-Catalog", "X-User-Id", "X-Tenant-Id",
                      "OpenStack-API-Version"],
    "expose_headers": ["X-Auth-Token", "X-Openstack-Request-Id", "X-Subject-Token",
                       "X-Service-Token", "OpenStack-API-Version"],
    "allow_methods": ["GET", "PUT", "POST", "DELETE", "PATCH"],
}

# Environment variable -> (section, option); a set variable wins over the files.
ENVIRONMENT = {
    "DATABASE_URL": ("placement_database", "connection"),
    "DATABASE_CONN_MAX_AGE": ("placement_database", "conn_max_age"),
    "DATABASE_MYSQL_DRIVER": ("placement_database", "mysql_driver"),
    "DATABASE_STATEMENT_TIMEOUT": ("placement_database", "statement_timeout"),
    "DATABASE_LOCK_TIMEOUT": ("placement_database", "lock_timeout"),
    "DATABASE_ROUND_TRIP_TIMEOUT": ("placement_database", "round_trip_timeout"),
    "DATABASE_OUTCOME_LOOKUP_TIMEOUT": ("placement_database", "outcome_lookup_timeout"),
    "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT": ("placement_database",
                                             "idle_in_transaction_timeout"),
    "DATABASE_MAX_POOL_SIZE": ("placement_database", "max_pool_size"),
    "DATABASE_POOL_TIMEOUT": ("placement_database", "pool_timeout"),
    "DATABASE_CONN_MAX_IDLE": ("placement_database", "conn_max_idle"),
    "PLACEMENT_API_NODES": ("placement_database", "api_nodes"),
    "PLACEMENT_WORKERS": ("api", "workers"),
    "PLACEMENT_THREADS": ("api", "threads"),
    "PLACEMENT_REQUEST_TIMEOUT": ("api", "request_timeout"),
    "SQLITE_TEST_NAME": ("placement_database", "sqlite_test_name"),
    "DATABASE_REPLICA_URLS": ("placement_database", "slave_connection"),
    "DATABASE_REPLICA_MAX_LAG": ("placement_database", "replica_max_lag"),
    "PLACEMENT_REPLICA_READ_ROUTES": ("placement_database", "replica_read_routes"),
    "PLACEMENT_AUTH_STRATEGY": ("api", "auth_strategy"),
    "PLACEMENT_MAX_REQUEST_BODY_SIZE": ("api", "max_request_body_size"),
    "PLACEMENT_CORS_ALLOWED_ORIGINS": ("cors", "allowed_origin"),
    "PLACEMENT_CORS_ALLOW_HEADERS": ("cors", "allow_headers"),
    "PLACEMENT_POLICY_FILE": ("oslo_policy", "policy_file"),
    "PLACEMENT_POLICY_DIRS": ("oslo_policy", "policy_dirs"),
    "PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS": ("oslo_policy", "enforce_new_defaults"),
    "PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES": ("placement", "randomize_allocation_candidates"),
    "PLACEMENT_MAX_ALLOCATION_CANDIDATES": ("placement", "max_allocation_candidates"),
    "PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY":
        ("placement", "allocation_candidates_generation_strategy"),
    "PLACEMENT_ALLOCATION_CONFLICT_RETRY_COUNT": ("placement", "allocation_conflict_retry_count"),
    "PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID": ("placement", "incomplete_consumer_project_id"),
    "PLACEMENT_INCOMPLETE_CONSUMER_USER_ID": ("placement", "incomplete_consumer_user_id"),
    "PLACEMENT_CHANGE_LOG_RETENTION_DAYS": ("placement", "change_log_retention_days"),
    "PLACEMENT_EXTENSIONS": ("placement", "extensions"),
    "SECRET_KEY": ("django", "secret_key"),
    "DEBUG": ("django", "debug"),
    "ALLOWED_HOSTS": ("django", "allowed_hosts"),
    "LOG_LEVEL": ("django", "log_level"),
    "PLACEMENT_DATA_DIR": ("django", "data_dir"),
    "PLACEMENT_LOG_FORMAT": ("django", "log_format"),
    "PLACEMENT_COMPILED_ENGINE": ("django", "compiled_engine"),
    "PLACEMENT_METRICS_PATH": ("django", "metrics_path"),
    "PLACEMENT_PUBLIC_PATHS": ("django", "public_paths"),
    "PLACEMENT_ALLOW_DEVELOPMENT_LOGIN": ("django", "allow_development_login"),
}


def option_groups():
    """(section, options) of every option the service reads, in config_sample's order."""
    return [
        ("api", OPTIONS["api"]),
        ("placement_database", OPTIONS["placement_database"]),
        ("placement", OPTIONS["placement"]),
        # oslo.policy's own options only: it always checks a token's scope against the
        # rule's scope types (every Placement rule is project-scoped).
        ("oslo_policy", policy_opts.list_opts()[0][1]),
        ("cors", cors.OPTS),
        # enable_proxy_headers_parsing: X-Forwarded-Proto is believed (settings.py)
        ("oslo_middleware", http_proxy_to_wsgi.OPTS),
        *authtoken_opts.list_auth_token_opts(),
        ("django", OPTIONS["django"]),
    ]


def register_options(conf):
    """Every option, with Placement's defaults where they differ from the libraries'."""
    for group, options in option_groups():
        conf.register_opts(options, group=group)
    for name, value in CORS_DEFAULTS.items():
        conf.set_default(name, value, group="cors")
    # Placement 16.0.0: the new (persona) policy defaults are on.
    conf.set_default("enforce_new_defaults", True, group="oslo_policy")


def config_dir(environ):
    return environ.get(CONFIG_DIR_VARIABLE, "").strip() or SYSTEM_CONFIG_DIR


def config_files(environ):
    """placement.conf of the configuration directory (an explicitly named directory must
    have one), then the file PLACEMENT_CONFIG_FILE names."""
    directory = config_dir(environ)
    default = os.path.join(directory, CONFIG_FILE_NAME)
    if os.path.isfile(default):
        files = [default]
    elif environ.get(CONFIG_DIR_VARIABLE, "").strip():
        raise ConfigError(f"{CONFIG_DIR_VARIABLE}: no {CONFIG_FILE_NAME} in {directory}")
    else:
        files = []
    named = environ.get("PLACEMENT_CONFIG_FILE")
    if named:
        if not os.path.isfile(named):
            raise ConfigError(f"PLACEMENT_CONFIG_FILE: no such file {named}")
        files.append(named)
    return files


def load(environ=None, args=(), register_cli=None, prog=None, version=None):
    """Parse the files and the environment; raise ConfigError on any bad value.

    `args` are a console script's command line (oslo.config's --config-file and
    --config-dir replace the default files, as in Placement's commands), its options
    registered by `register_cli(conf)`; a bad command line exits as argparse does."""
    environ = os.environ if environ is None else environ
    conf = cfg.ConfigOpts()
    register_options(conf)
    if register_cli is not None:
        register_cli(conf)
    files = config_files(environ)
    options = {(group, opt.dest): opt for group, opts in option_groups() for opt in opts}
    try:
        conf(args=list(args), project="placement", prog=prog, version=version,
             default_config_files=files, default_config_dirs=[], use_env=False)
    except cfg.Error as exc:
        raise ConfigError(_one_line(exc))
    for variable, (group, name) in ENVIRONMENT.items():
        value = environ.get(variable)
        if value is None:
            continue
        opt = options[group, name]
        if isinstance(opt, cfg.ListOpt):
            value = [item.strip() for item in value.split(",") if item.strip()]
        elif isinstance(opt, cfg.MultiStrOpt):
            value = [value]
        try:
            conf.set_override(name, value, group=group)
        except ValueError as exc:
            raise ConfigError(f"{variable} ([{group}] {name}): {_one_line(exc)}")
    for group, name in options:  # oslo.config converts lazily: find bad values now
        try:
            conf[group][name]
        except (cfg.Error, ValueError) as exc:
            raise ConfigError(f"[{group}] {name}: {_one_line(exc)}")
    _check_database_url(conf.placement_database.connection)
    _check_time_limits(conf)
    _check_replica_urls(conf.placement_database)
    _check_public_paths(conf.django)
    return conf


_installed = None


def install(conf):
    """Make `conf` the configuration the settings take (a console script that parsed its
    own command line calls this before Django starts)."""
    global _installed
    _installed = conf


def current():
    """The installed configuration, else one loaded from the files and environment."""
    return _installed if _installed is not None else load()


def operator_paths(django_options):
    """Every operator endpoint's path (foundation.ops answers them)."""
    return (*OPERATOR_PATHS, django_options.metrics_path)


def _check_public_paths(django_options):
    for path in django_options.public_paths:
        if path not in operator_paths(django_options):
            raise ConfigError(f"[django] public_paths: {path} is not an operator endpoint "
                              f"({', '.join(operator_paths(django_options))})")


def prometheus_multiproc_dir(environ=None):
    """PROMETHEUS_MULTIPROC_DIR, or None: the directory gunicorn's workers share their
    metric values through. Not a placement.conf option: prometheus-client reads the
    variable itself when it is imported, so only the environment can set it."""
    environ = os.environ if environ is None else environ
    return environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def _one_line(exc):
    text = " ".join(str(exc).split())
    # oslo.config's "Value for option X from LocationInfo(..., detail='FILE') is not valid:"
    return re.sub(r"Value for option \S+ from LocationInfo\(.*?detail='(.*?)'\) is not valid:",
                  r"bad value in \1:", text)


MYSQL_SCHEMES = ("mysql", "mariadb")
POSTGRESQL_SCHEMES = ("postgres", "postgresql")
# Query parameters of a MySQL URL handed to the driver (PyMySQL), as oslo.db does. The
# character set is always utf8mb4 (a `charset=utf8` is taken as meaning it: MySQL's
# utf8 has no 4-byte characters); `plugin` names SQLAlchemy plugins (devstack's
# dbcounter) and means nothing here.
MYSQL_DRIVER_PARAMETERS = ("unix_socket", "read_default_file", "read_default_group",
                           "connect_timeout", "ssl_ca", "ssl_cert", "ssl_key")
MYSQL_IGNORED_PARAMETERS = ("charset", "plugin")


def database_scheme(url):
    """"mysql", "postgresql" or "sqlite" of a database URL (driver suffix dropped)."""
    scheme = urlparse(url).scheme.split("+")[0]
    if scheme in MYSQL_SCHEMES:
        return "mysql"
    return "postgresql" if scheme in POSTGRESQL_SCHEMES else scheme


def _check_database_url(url):
    if not url:
        return
    scheme = database_scheme(url)
    if scheme not in ("sqlite", "postgresql", "mysql"):
        raise ConfigError(f"[placement_database] connection: unsupported database "
                          f"{scheme or url!r} (mysql+pymysql://, postgresql:// or sqlite:///)")
    if scheme == "mysql":
        _check_mysql_url("[placement_database] connection", url)


def _check_mysql_url(option, url):
    parsed = urlparse(url)
    driver = parsed.scheme.partition("+")[2]
    if driver not in ("", "pymysql", "mysqldb"):
        raise ConfigError(f"{option}: unsupported MySQL driver {driver!r} (mysql+pymysql://)")
    if not parsed.path.strip("/"):
        raise ConfigError(f"{option}: no database name (mysql+pymysql://user:pass@host/name)")
    unknown = sorted(set(parse_qs(parsed.query)) - set(MYSQL_DRIVER_PARAMETERS)
                     - set(MYSQL_IGNORED_PARAMETERS))
    if unknown:
        raise ConfigError(f"{option}: unknown query parameter {', '.join(unknown)} "
                          f"(known: {', '.join(MYSQL_DRIVER_PARAMETERS + MYSQL_IGNORED_PARAMETERS)})")


def _check_time_limits(conf):
    """A round trip's limit below the front door's: a frozen database node must cost a
    client a 503 of ours, not nginx's 504 with the outcome unknown."""
    round_trip = conf.placement_database.round_trip_timeout
    if round_trip and round_trip >= conf.api.request_timeout:
        raise ConfigError(f"[placement_database] round_trip_timeout ({round_trip:g}) must "
                          f"be below [api] request_timeout ({conf.api.request_timeout})")


def _check_replica_urls(database):
    if not database.slave_connection:
        return
    primary = database_scheme(database.connection or "")
    if primary not in ("postgresql", "mysql"):
        raise ConfigError("[placement_database] slave_connection: read replicas need a "
                          "PostgreSQL or MySQL connection")
    for url in database.slave_connection:
        if database_scheme(url) != primary:
            raise ConfigError(f"[placement_database] slave_connection: not a "
                              f"{'MySQL' if primary == 'mysql' else 'PostgreSQL'} "
                              f"URL: {urlparse(url).scheme or url!r}")
        if primary == "mysql":
            _check_mysql_url("[placement_database] slave_connection", url)


def secret_key(conf, data_dir):
    """The configured key, else this installation's own, created once under data_dir."""
    if conf.django.secret_key:
        return conf.django.secret_key
    path = Path(data_dir) / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and linked in place: concurrent workers agree on one key.
        scratch = path.with_name(f".secret_key.{os.getpid()}")
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
        try:
            os.link(scratch, path)
        except FileExistsError:
            pass
        finally:
            scratch.unlink()
    return path.read_text().strip()


def stop(exc):
    """Exit with the one-line message of a ConfigError (no traceback)."""
    sys.stderr.write(f"placement: configuration error: {exc}\n")
    raise SystemExit(4)
