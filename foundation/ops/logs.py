"""Log formats: plain text (the development default) or one JSON object per line
(PLACEMENT_LOG_FORMAT=json), chosen in settings.LOGGING; and the per-request line.

Extra fields passed with `extra={...}` become keys of the JSON object, so the
request line and the services' warnings carry their ids as fields, not just text.
"""
import json
import logging
import re
from datetime import datetime, timezone

REQUEST_LOG = logging.getLogger("placement.request")

# Attributes every LogRecord has; anything else on a record came in through `extra`.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime"}

# A request id: ours in x-openstack-request-id, and what Placement's request_id
# middleware accepts as a caller's global request id.
REQUEST_ID = re.compile(
    r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message and the extra fields."""

    def format(self, record):
        document = {
            "time": datetime.fromtimestamp(record.created, timezone.utc)
                            .isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRIBUTES and not key.startswith("_"):
                document[key] = value
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document, default=str)


def global_request_id(request):
    """The caller's X-OpenStack-Request-ID when it is a valid req-<uuid>, else None
    (Placement uses it only for logging and never echoes it)."""
    value = request.headers.get("X-OpenStack-Request-ID")
    if value and REQUEST_ID.match(value):
        return value
    return None


def log_request(request, *, route, status, microversion, seconds, db_queries, db_seconds):
    context = getattr(request, "context", None)
    fields = {
        "request_id": getattr(request, "request_id", None),
        "global_request_id": global_request_id(request),
        "user_id": getattr(context, "user_id", None),
        "project_id": getattr(context, "project_id", None),
        "method": request.method,
        "path": request.path,
        "route": route,
        "microversion": microversion,
        "status": int(status),
        "duration_ms": round(seconds * 1000, 3),
        "db_queries": db_queries,
        "db_duration_ms": round(db_seconds * 1000, 3),
    }
    REQUEST_LOG.info(
        "%s %s %s %.1fms %s microversion=%s db=%d/%.1fms user=%s project=%s",
        request.method, request.path, status, fields["duration_ms"], fields["request_id"],
        microversion, db_queries, fields["db_duration_ms"], fields["user_id"],
        fields["project_id"], extra=fields)
