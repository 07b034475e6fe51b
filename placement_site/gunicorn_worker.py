"""gunicorn's sync worker, answering in Placement's error format where gunicorn itself
refuses a request.

gunicorn reads Content-Length before the application sees the request, and answers a
value that is not a number with an HTML page. Placement answers it with its JSON error
body (http.md), which is what clients parse; this worker does the same. Every other
request, good or bad, goes through unchanged.

Use: gunicorn --worker-class placement_site.gunicorn_worker.PlacementSyncWorker ...
"""
import json
import uuid

from gunicorn import util
from gunicorn.http.errors import InvalidHeader
from gunicorn.workers.sync import SyncWorker

from placement_site.api.errors import error_body


def _content_length_is_not_an_integer(exc):
    if not isinstance(exc, InvalidHeader) or exc.hdr != "CONTENT-LENGTH":
        return False
    values = [value for name, value in getattr(exc.req, "headers", None) or ()
              if name == "CONTENT-LENGTH"]
    try:
        [int(value) for value in values]
    except ValueError:
        return True
    return False


class PlacementSyncWorker(SyncWorker):

    def handle_error(self, req, client, addr, exc):
        if not _content_length_is_not_an_integer(exc):
            super().handle_error(req, client, addr, exc)
            return
        request_id = f"req-{uuid.uuid4()}"
        body = json.dumps(error_body(400, "content-length header must be an integer",
                                     request_id)).encode()
        head = ("HTTP/1.1 400 Bad Request\r\n"
                "Connection: close\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n"
                f"x-openstack-request-id: {request_id}\r\n\r\n")
        self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        try:
            util.write_nonblock(client, head.encode("latin1") + body)
        except OSError:
            self.log.debug("Failed to send error message.")
