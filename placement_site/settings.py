"""Django settings, all read from environment variables (see README)."""
import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("PLACEMENT_DATA_DIR", BASE_DIR / "data"))


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def env_list(name):
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def database_from_url(url):
    """Turn DATABASE_URL into a Django DATABASES entry (sqlite:/// or postgresql://)."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
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
            "TEST": {"NAME": os.environ.get("SQLITE_TEST_NAME") or None},
        }
    if parsed.scheme in ("postgres", "postgresql", "postgresql+psycopg2"):
        options = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parsed.path.lstrip("/")) or "placement",
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            "CONN_MAX_AGE": int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
    raise ValueError(f"Unsupported DATABASE_URL scheme: {parsed.scheme!r}")


SECRET_KEY = os.environ.get("SECRET_KEY", "insecure-development-key-change-me")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS") or ["*"]

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
    "placement_site.ops",
]

MIDDLEWARE = [
    # outermost: answers /healthz, /readyz, /metrics, /openapi.json; measures and logs the rest
    "placement_site.ops.middleware.ObservabilityMiddleware",
    "placement_site.api.middleware.RequestIdMiddleware",
    "placement_site.api.middleware.CorsMiddleware",
    "placement_site.api.middleware.PlacementAuthMiddleware",
    "placement_site.api.middleware.MicroversionMiddleware",
    "placement_site.api.middleware.BodyFramingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

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
        "DIRS": [BASE_DIR / "templates"],
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
        os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'placement.sqlite3'}"
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# Paths served by Django's own session-authenticated pages, not by the Placement API.
PLACEMENT_NON_API_PREFIXES = ("/admin/", "/ui/", "/static/")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["placement_site.api.renderers.FastJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "placement_site.api.negotiation.JSONOnlyNegotiation",
    "DEFAULT_VERSIONING_CLASS": "placement_site.api.microversion.PlacementVersioning",
    "EXCEPTION_HANDLER": "placement_site.api.exceptions.exception_handler",
}

# --- Placement options (the [placement], [api], [cors] and [oslo_policy] knobs) ---
PLACEMENT_AUTH_STRATEGY = os.environ.get("PLACEMENT_AUTH_STRATEGY", "noauth2")
PLACEMENT_CORS_ALLOWED_ORIGINS = env_list("PLACEMENT_CORS_ALLOWED_ORIGINS")
PLACEMENT_CORS_ALLOW_HEADERS = env_list("PLACEMENT_CORS_ALLOW_HEADERS") or [
    "X-Auth-Token", "X-Openstack-Request-Id", "X-Identity-Status", "X-Roles",
    "X-Service-Catalog", "X-User-Id", "X-Tenant-Id", "OpenStack-API-Version",
]
PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS = env_bool("PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS", False)
PLACEMENT_POLICY_FILE = os.environ.get("PLACEMENT_POLICY_FILE", "")
PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID = os.environ.get(
    "PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID", "00000000-0000-0000-0000-000000000000")
PLACEMENT_INCOMPLETE_CONSUMER_USER_ID = os.environ.get(
    "PLACEMENT_INCOMPLETE_CONSUMER_USER_ID", "00000000-0000-0000-0000-000000000000")
PLACEMENT_ALLOCATION_CONFLICT_RETRY_COUNT = int(
    os.environ.get("PLACEMENT_ALLOCATION_CONFLICT_RETRY_COUNT", "10"))
PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = env_bool("PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES")
PLACEMENT_MAX_ALLOCATION_CANDIDATES = int(os.environ.get("PLACEMENT_MAX_ALLOCATION_CANDIDATES", "-1"))
# depth-first: each anchor's candidates in turn; breadth-first: one per anchor in turn,
# so that max_allocation_candidates spreads over more trees.
PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY = os.environ.get(
    "PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY", "depth-first")
if PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY not in ("depth-first", "breadth-first"):
    raise ImproperlyConfigured("PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY must be "
                               "depth-first or breadth-first")

# --- Operations (placement_site/ops, README "Operating in production") ---
# Where Prometheus scrapes; outside Placement's routes, no token (restrict it at the proxy).
PLACEMENT_METRICS_PATH = os.environ.get("PLACEMENT_METRICS_PATH", "/metrics")
if not PLACEMENT_METRICS_PATH.startswith("/"):
    raise ImproperlyConfigured("PLACEMENT_METRICS_PATH must start with /")
# text: plain lines for development; json: one JSON object per line for log pipelines.
PLACEMENT_LOG_FORMAT = os.environ.get("PLACEMENT_LOG_FORMAT", "text")
if PLACEMENT_LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured("PLACEMENT_LOG_FORMAT must be text or json")

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "placement_site.ops.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler",
                             "formatter": PLACEMENT_LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.request": {"level": "ERROR"}},
}
