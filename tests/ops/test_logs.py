"""Log formats: JSON objects with the extra fields; plain text by default."""
import json
import logging
import uuid

from django.conf import settings

from foundation.ops.logs import JsonFormatter


def test_plain_text_is_the_default():
    assert settings.PLACEMENT_LOG_FORMAT == "text"
    assert settings.LOGGING["handlers"]["console"]["formatter"] == "text"


def test_json_formatter_keeps_extra_fields_and_exceptions():
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.getLogger("x").makeRecord(
            "x", logging.ERROR, __file__, 1, "failed %s", ("here",),
            exc_info=__import__("sys").exc_info(), extra={"provider_uuid": "p1"})
    document = json.loads(JsonFormatter().format(record))
    assert document["message"] == "failed here"
    assert document["level"] == "ERROR"
    assert document["provider_uuid"] == "p1"
    assert "ValueError: boom" in document["exception"]
    assert "args" not in document and "msg" not in document


def test_request_line_in_text_mode(api, caplog):
    caller = f"req-{uuid.uuid4()}"
    with caplog.at_level(logging.INFO, logger="placement.request"):
        response = api.get("/traits", headers={"X-OpenStack-Request-ID": caller})
    [record] = [r for r in caplog.records if r.name == "placement.request"]
    assert response["x-openstack-request-id"] in record.getMessage()
    assert "GET /traits 200" in record.getMessage()
    assert record.global_request_id == caller
    assert record.route == "/traits"
    assert record.user_id == "admin"
