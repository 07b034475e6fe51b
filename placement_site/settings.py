"""Django settings; every value comes from foundation.config (placement.conf and
environment variables, see docs/operators/configuration.md)."""
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from foundation import config
from foundation.mysql import url as mysql_url

try:
    CONF = config.current()
except config.ConfigError as exc:
    config.stop(exc)

BASE_DIR = config.BASE_DIR
DATA_DIR = Path(CONF.django.data_dir)


def database_from_url(url):
    """Turn a database URL (SQLAlchemy style accepted) into a Django DATABASES entry."""
    parsed = urlparse(url)
    scheme = parsed.scheme.split("+")[0]
    if scheme == "sqlite":
        # sqlite:///relative/path or sqlite:////absolute/path
        path = unquote(parsed.path)[1:] if parsed.path.startswith("//") else unquote(parsed.path)
        path = path or str(DATA_DIR / "placement.sqlite3")
        if parsed.netloc:
            path = parsed.netloc + path
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path,
            "OPTIONS": {
                # Writers queue up instead of failing: immediate transactions take the
                # write lock up front, WAL lets readers run beside the one writer.
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
            "TEST": {"NAME": CONF.placement_database.sqlite_test_name or None},
        }
    if scheme in ("mysql", "mariadb"):
        return mysql_url.database_entry(url, CONF.placement_database.conn_max_age)
    # config.load() let only sqlite, mysql and postgresql URLs through.
    options = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    # PostgreSQL JIT-compiles any statement it costs above jit_above_cost: 10-12 ms of
    # compiling for queries that run in a few (an allocation candidates batch over a
    # wide range of trees: 17 ms with, 8.5 without). `options` in the URL replaces this;
    # behind pgbouncer, which drops `options`, set it on the role
    # (docs/operators/production.md#the-database).
    options.setdefault("options", "-c jit=off")
    options["options"] = postgresql_session_options(options["options"])
    host, port = postgresql_hosts(parsed.netloc)
    return {
        "ENGINE": "foundation.postgresql",   # Django's, checked without a round trip
        "NAME": unquote(parsed.path.lstrip("/")) or "placement",
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": host,
        "PORT": port,
        "CONN_MAX_AGE": CONF.placement_database.conn_max_age,
        "CONN_HEALTH_CHECKS": True,
        # Safe behind a transaction-pooling pgbouncer: a server-side cursor would
        # outlive the transaction its server connection was lent for.
        "DISABLE_SERVER_SIDE_CURSORS": True,
        "OPTIONS": options,
    }


def postgresql_hosts(netloc):
    """(HOST, PORT) of a URL's host part, as libpq takes them: one host, or several
    (`host1:5432,host2:5432`, libpq's multi-host form) as comma-separated lists. With
    `?target_session_attrs=read-write` libpq connects to whichever is the primary, so
    the service writes on after a standby is promoted (production.md)."""
    hosts, ports = [], []
    for item in netloc.rpartition("@")[2].split(","):
        host, _, port = item.rpartition(":") if not item.endswith("]") else (item, "", "")
        if not host or "]" in port:   # no port, or an IPv6 address's colons
            host, port = item, ""
        hosts.append(unquote(host.strip("[]")))
        ports.append(port)
    if len(hosts) == 1:
        return hosts[0], ports[0]
    return ",".join(hosts), ",".join(port or "5432" for port in ports)


# --- time limits and connections (one place) -------------------------------------------

COMMIT_DEADLINE_MARGIN = 5  # seconds before the front door's timeout a commit is refused


def postgresql_session_options(startup):
    """libpq's `options` startup parameter with the statement, lock and idle-in-transaction
    timeouts ([placement_database] statement_timeout, lock_timeout,
    idle_in_transaction_timeout), unless it sets them itself.
    pgbouncer drops `options`: behind it set them on the role (production.md)."""
    database = CONF.placement_database
    for name, seconds in (("statement_timeout", database.statement_timeout),
                          ("lock_timeout", database.lock_timeout),
                          ("idle_in_transaction_session_timeout",
                           database.idle_in_transaction_timeout)):
        if seconds and f"{name}=" not in startup:
            startup += f" -c {name}={int(seconds * 1000)}"
    return startup.strip()


# The same time limits on MySQL/MariaDB, set per session by foundation/mysql/base.py.
PLACEMENT_DB_TIME_LIMITS = {
    "statement_timeout": CONF.placement_database.statement_timeout,
    "lock_timeout": CONF.placement_database.lock_timeout,
    "idle_in_transaction_timeout": CONF.placement_database.idle_in_transaction_timeout,
}
# How long one answer of the database is waited for, on both families (0: no limit), and
# how long a commit that lost its connection looks up its outcome (foundation/db_faults.py).
PLACEMENT_DB_ROUND_TRIP_TIMEOUT = CONF.placement_database.round_trip_timeout
PLACEMENT_DB_OUTCOME_LOOKUP_TIMEOUT = CONF.placement_database.outcome_lookup_timeout
# The per-process connection bound of served processes (foundation/db_pool.py).
PLACEMENT_DB_POOL = {
    "max_pool_size": CONF.placement_database.max_pool_size,
    "pool_timeout": CONF.placement_database.pool_timeout,
    "conn_max_idle": CONF.placement_database.conn_max_idle,
}
# What the upgrade check counts the API's connections from (api_nodes x workers x
# min(threads, max_pool_size)).
PLACEMENT_API_PROCESSES = {
    "nodes": CONF.placement_database.api_nodes,
    "workers": CONF.api.workers,
    "threads": CONF.api.threads,
}
# No commit after this many seconds of a request (foundation/db_faults.py).
PLACEMENT_COMMIT_DEADLINE = max(1, CONF.api.request_timeout - COMMIT_DEADLINE_MARGIN)


def replica_from_url(url):
    """A read replica's DATABASES entry: a down replica is found out quickly, and the
    test runner reads the test primary through it instead of creating a database."""
    database = database_from_url(url)
    # a number: PyMySQL compares it with numbers (a string fails every connection)
    database["OPTIONS"].setdefault("connect_timeout", 2)
    database["TEST"] = {"MIRROR": "default"}
    return database


SECRET_KEY = config.secret_key(CONF, DATA_DIR)
# The operator UI and admin: a CSRF refusal in JSON to a client that asked for JSON.
CSRF_FAILURE_VIEW = "foundation.csrf.csrf_failure"
# X-Forwarded-Proto believed only when the operator says a proxy sets it (Placement's
# option); gunicorn itself believes it from --forwarded-allow-ips (default: loopback).
if CONF.oslo_middleware.enable_proxy_headers_parsing:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Refuse to start beyond loopback while admin/admin logs in (development_login.py).
PLACEMENT_ALLOW_DEVELOPMENT_LOGIN = CONF.django.allow_development_login
DEBUG = CONF.django.debug
ALLOWED_HOSTS = CONF.django.allowed_hosts

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "mptt",
    "providers",
    "allocations",
    "candidates",
    "console",  # the operator pages under /ui/
    "placement_site",  # management commands config_sample, policy_sample and openapi
]

MIDDLEWARE = [
    # outermost: answers the public operator endpoints ([django] public_paths of /healthz,
    # /readyz, /metrics, /openapi.json); measures and logs the Placement requests
    "foundation.ops.middleware.ObservabilityMiddleware",
    "foundation.api.middleware.RequestIdMiddleware",
    "foundation.api.middleware.AnyHostMiddleware",
    "foundation.api.middleware.PageSecurityMiddleware",
    "foundation.api.middleware.CorsMiddleware",
    "foundation.api.middleware.PlacementAuthMiddleware",
    # the operator endpoints that need a token: after authentication
    "foundation.ops.middleware.OperatorEndpointMiddleware",
    "foundation.api.middleware.MicroversionMiddleware",
    "foundation.api.middleware.BodyFramingMiddleware",
    "foundation.db_routing.ReplicaReadMiddleware",
    # innermost: PLACEMENT_PAGE_MIDDLEWARE, for the UI and admin pages only
    "foundation.api.middleware.PageMiddleware",
]
# Django's page middleware, in MIDDLEWARE's order; API requests skip it.
PLACEMENT_PAGE_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # a NUL in a page's query string: said, before any page reads it
    "foundation.api.middleware.PageQueryMiddleware",
    # session and CSRF cookies Secure on pages served over HTTPS: after they are set
    "foundation.api.middleware.SecureCookiesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # a Keystone login's identity on request.user, or its logout once its token expired
    "console.keystone.KeystoneSessionMiddleware",
    # the change log's actor on UI and admin pages: the login (foundation.actor)
    "foundation.api.middleware.LoginActorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
# The admin's checks look for its middleware in MIDDLEWARE; it is in the page stack.
SILENCED_SYSTEM_CHECKS = ["admin.E408", "admin.E409", "admin.E410"]

# Who logs in to the console and the admin (console/door.py): Keystone operators, whose
# permissions the API's policy decides, or local Django accounts.
AUTHENTICATION_BACKENDS = (["console.keystone.KeystoneBackend"]
                           if CONF.api.auth_strategy == "keystone"
                           else ["django.contrib.auth.backends.ModelBackend"])
LOGIN_URL = "/admin/login/"
LOGIN_REDIRECT_URL = "/ui/"   # after a login without a next= of this site

ROOT_URLCONF = "placement_site.urls"
WSGI_APPLICATION = "placement_site.wsgi.application"
APPEND_SLASH = False  # Placement: a trailing slash is a different (unknown) path.
# Placement sets no limit on body size or parameter count; Django's defaults turned
# a body over 2.5 MB into a 500 and more than 1000 query parameters into an HTML 400.
DATA_UPLOAD_MAX_MEMORY_SIZE = None
DATA_UPLOAD_MAX_NUMBER_FIELDS = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # top-level templates/ in a checkout; inside this package when installed
        "DIRS": [BASE_DIR / "templates" if config.IN_CHECKOUT
                 else Path(__file__).resolve().parent / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(
        CONF.placement_database.connection or f"sqlite:///{DATA_DIR / 'placement.sqlite3'}"
    ),
    # Streaming hot standbys of default; foundation.db_routing decides who reads there.
    **{f"replica{number}": replica_from_url(url)
       for number, url in enumerate(CONF.placement_database.slave_connection, 1)},
}
DATABASE_ROUTERS = ["foundation.db_routing.ReplicaRouter"]
PLACEMENT_REPLICA_MAX_LAG = CONF.placement_database.replica_max_lag
# mysqlclient or PyMySQL (foundation/mysql/driver.py)
PLACEMENT_MYSQL_DRIVER = CONF.placement_database.mysql_driver
PLACEMENT_REPLICA_READ_ROUTES = CONF.placement_database.replica_read_routes
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"  # collectstatic, for a proxy that serves them

# Paths served by Django's own session-authenticated pages, not by the Placement API.
PLACEMENT_NON_API_PREFIXES = ("/admin/", "/ui/", "/static/")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["foundation.api.renderers.FastJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "foundation.api.negotiation.JSONOnlyNegotiation",
    "DEFAULT_VERSIONING_CLASS": "foundation.api.microversion.PlacementVersioning",
    "EXCEPTION_HANDLER": "foundation.api.exceptions.exception_handler",
}

# --- Placement options ([placement], [api], [cors], [oslo_policy]) ---
PLACEMENT_AUTH_STRATEGY = CONF.api.auth_strategy
PLACEMENT_MAX_REQUEST_BODY_SIZE = CONF.api.max_request_body_size
PLACEMENT_CORS_ALLOWED_ORIGINS = CONF.cors.allowed_origin or []
PLACEMENT_CORS_ALLOW_HEADERS = CONF.cors.allow_headers
PLACEMENT_CORS_ALLOW_CREDENTIALS = CONF.cors.allow_credentials
PLACEMENT_CORS_EXPOSE_HEADERS = CONF.cors.expose_headers
PLACEMENT_CORS_MAX_AGE = CONF.cors.max_age
PLACEMENT_CORS_ALLOW_METHODS = CONF.cors.allow_methods
PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS = CONF.oslo_policy.enforce_new_defaults
# Relative policy paths are looked for beside the configuration files (oslo.policy).
PLACEMENT_POLICY_FILE = CONF.oslo_policy.policy_file
PLACEMENT_POLICY_DIRS = CONF.oslo_policy.policy_dirs
PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID = CONF.placement.incomplete_consumer_project_id
PLACEMENT_INCOMPLETE_CONSUMER_USER_ID = CONF.placement.incomplete_consumer_user_id
PLACEMENT_ALLOCATION_CONFLICT_RETRY_COUNT = CONF.placement.allocation_conflict_retry_count
# The change log (providers.services.change_log): entries older than this are pruned.
PLACEMENT_CHANGE_LOG_RETENTION_DAYS = CONF.placement.change_log_retention_days
PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = CONF.placement.randomize_allocation_candidates
PLACEMENT_MAX_ALLOCATION_CANDIDATES = CONF.placement.max_allocation_candidates
# the opt-in extensions on (empty: the API is exactly Placement 1.39)
PLACEMENT_EXTENSIONS = frozenset(CONF.placement.extensions)
# depth-first: each anchor's candidates in turn; breadth-first: one per anchor in turn,
# so that max_allocation_candidates spreads over more trees.
PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY = (
    CONF.placement.allocation_candidates_generation_strategy)
# Allocation candidates read the provider topology from a per-process snapshot once its
# token has been unchanged this long (candidates/sql/topology.py); until then, and while
# the topology keeps changing, from the database.
PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 1.0
# The engine's modules compiled by Cython, when built for their current source.
PLACEMENT_COMPILED_ENGINE = CONF.django.compiled_engine

# --- Operations (placement_site/ops, docs/operators/operating.md) ---
PLACEMENT_METRICS_PATH = CONF.django.metrics_path
# Operator endpoints answered without a token; the others need an administrator's.
PLACEMENT_PUBLIC_PATHS = frozenset(CONF.django.public_paths)
# The operator endpoints besides metrics (foundation/ops/middleware.py): the project's views
# (they look into the apps), named so the foundation imports no app.
PLACEMENT_OPERATOR_ENDPOINTS = {
    "/healthz": "placement_site.health.healthz",
    "/readyz": "placement_site.health.readyz",
    "/openapi.json": "placement_site.openapi.openapi_view",
}
# Set (gunicorn_conf sets it): metrics in prometheus-client's multiprocess mode.
PROMETHEUS_MULTIPROC_DIR = config.prometheus_multiproc_dir()
PLACEMENT_LOG_FORMAT = CONF.django.log_format
LOG_LEVEL = CONF.django.log_level.upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "foundation.ops.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler",
                             "formatter": PLACEMENT_LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.request": {"level": "ERROR"}},
}
