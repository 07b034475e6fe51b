"""The request body rule, for every server in front of the WSGI application: a body is
read whole, up to `[api] max_request_body_size`, before the application sees it.

- A Content-Length above the limit is answered 413 with Placement's error body before a
  byte of the body is read; a chunked body is read only until it passes the limit.
- A body that ends before its Content-Length (the client half-closed, or stopped sending
  until the server's read timeout) is answered 400 and never reaches the application.
- The application gets the body from memory, so it never waits on a client.

A request refused here may leave unread bytes on the connection: nginx (placement-api)
has read the whole request already, and gunicorn's parser discards the rest of a body
before it reads the next request.
"""
import io
import json
import uuid

from django.conf import settings

from foundation.api.errors import error_body

_CHUNK = 1 << 16


class _Refused(Exception):
    def __init__(self, status, detail):
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _read_body(stream, length, limit):
    """The body in memory (a file at its start) and its size; `length` is None for a
    chunked body (read until its end)."""
    if length is not None and length > limit:
        raise _Refused(413, f"The request body is {length} bytes; the largest accepted "
                            f"is {limit} bytes.")
    wanted = limit + 1 if length is None else length
    buffer = io.BytesIO()
    while buffer.tell() < wanted:
        try:
            chunk = stream.read(min(_CHUNK, wanted - buffer.tell()))
        except OSError:  # a read timeout or a reset: the client stopped sending
            chunk = b""
        if not chunk:
            break
        buffer.write(chunk)
    if length is None and buffer.tell() > limit:
        raise _Refused(413, f"The request body is larger than {limit} bytes, the largest "
                            "accepted.")
    if length is not None and buffer.tell() < length:
        raise _Refused(400, f"The request body ended {length - buffer.tell()} bytes "
                            "before its Content-Length.")
    size = buffer.tell()
    buffer.seek(0)
    return buffer, size


def _refusal(start_response, refused):
    # imported here: gunicorn's master imports this module (through the worker) before
    # Django's settings are loaded, and the API middleware needs them
    from foundation.api.middleware import REQUEST_ID_HEADER

    request_id = f"req-{uuid.uuid4()}"
    body = json.dumps(error_body(refused.status, refused.detail, request_id)).encode()
    status = {400: "400 Bad Request", 413: "413 Request Entity Too Large"}[refused.status]
    start_response(status, [("Content-Type", "application/json"),
                            ("Content-Length", str(len(body))),
                            (REQUEST_ID_HEADER, request_id)])
    return [body]


def bounded_body(application):
    """Wrap a WSGI application with the request body rule."""

    def bounded(environ, start_response):
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        declared = environ.get("CONTENT_LENGTH") or "0"
        if not chunked and (declared == "0" or not declared.isdigit()):
            # no body, or a bad header the API answers itself
            return application(environ, start_response)
        try:
            body, size = _read_body(environ["wsgi.input"],
                                    None if chunked else int(declared),
                                    settings.PLACEMENT_MAX_REQUEST_BODY_SIZE)
        except _Refused as refused:
            return _refusal(start_response, refused)
        environ["wsgi.input"] = body
        environ["CONTENT_LENGTH"] = str(size)
        return application(environ, start_response)

    return bounded
