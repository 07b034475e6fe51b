"""Call the Placement API in-process: no server, same code path as HTTP.

PlacementClient builds a WSGI environ for each call and hands it to Django's
real request handler, so every request goes through the same middleware
(auth, microversion negotiation, body framing), URL table, policy checks,
JSON-schema validation, services and error rendering as a request that
arrived over the network. Management commands use it to apply operator
input with exactly the API's validation.

Example::

    from placement_site.inprocess import PlacementClient

    client = PlacementClient(version="latest", token="admin")
    status, headers, body = client.post(
        "/resource_providers", {"name": "cn1", "uuid": "..."})
    status, headers, body = client.get("/resource_providers?name=cn1")
    assert status == 200, body
    generation = body["resource_providers"][0]["generation"]
    result = client.put(f"/resource_providers/{uuid}/inventories", {
        "resource_provider_generation": generation,
        "inventories": {"VCPU": {"total": 8}}})
    result.status, result.headers["openstack-api-version"], result.body

    # a reshape needs the `service` role under the new policy defaults:
    PlacementClient(roles=["admin", "service"]).post("/reshaper", payload)

Each call returns a Result, a named tuple (status, headers, body): the
integer status, a case-insensitive mapping of response headers and the
decoded JSON body (None when the response has no body, or the text when it
is not JSON).

Identity: `token` is sent as noauth2's X-Auth-Token ("user" or
"user:project"; "admin" is an administrator) with X-Roles; for deployments
using the keystone strategy, where no header is believed, the same identity
travels in the WSGI environment (auth.IN_PROCESS_IDENTITY), which only
in-process callers can set. `roles` defaults to ["admin"] for the admin
token and none otherwise.

Database connections: Django normally closes "old" connections at the start
and end of each request. Here the caller owns the connection (it may wrap
several calls in `transaction.atomic()` and roll them back, as
`manage.py reshape --dry-run` does), so those handlers are suspended for the
duration of a call. The client is meant for commands, scripts and tests, one
thread at a time; it is not a replacement for gunicorn.
"""
import io
import json
from contextlib import contextmanager
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.utils.datastructures import CaseInsensitiveMapping

from foundation.api.auth import IN_PROCESS_IDENTITY, RequestContext

__all__ = ["PlacementClient", "Result"]


class Result(NamedTuple):
    """One API response: status code, headers, decoded body."""

    status: int
    headers: CaseInsensitiveMapping
    body: Any

    @property
    def ok(self):
        return 200 <= self.status < 300

    def error_detail(self):
        """The `detail` of a Placement error body, whitespace-trimmed, or ''."""
        try:
            detail = self.body["errors"][0]["detail"]
        except (TypeError, KeyError, IndexError):
            return "" if self.body is None else str(self.body)
        # Placement prefixes the status' generic explanation; keep the specific part.
        return detail.split("\n\n", 1)[-1].strip()

    def error_code(self):
        try:
            return self.body["errors"][0].get("code")
        except (TypeError, KeyError, IndexError):
            return None


@contextmanager
def _connection_kept():
    """Suspend Django's per-request closing of old DB connections."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


class PlacementClient:
    """Dispatch Placement API requests through Django without a server."""

    def __init__(self, version="latest", token="admin", roles=None, headers=None,
                 script_name=""):
        self.version = version
        self.token = token
        self.roles = roles
        self.headers = dict(headers or {})
        self.script_name = script_name
        self._handler = WSGIHandler()

    # --- public verbs ---------------------------------------------------------

    def get(self, path, body=None, **kwargs):
        return self.request("GET", path, body, **kwargs)

    def put(self, path, body=None, **kwargs):
        return self.request("PUT", path, body, **kwargs)

    def post(self, path, body=None, **kwargs):
        return self.request("POST", path, body, **kwargs)

    def delete(self, path, body=None, **kwargs):
        return self.request("DELETE", path, body, **kwargs)

    def request(self, method, path, body=None, version=None, headers=None):
        """Send one request; `body` is JSON-encoded unless it is bytes or str."""
        if body is None:
            payload = b""
        elif isinstance(body, bytes):
            payload = body
        elif isinstance(body, str):
            payload = body.encode("utf-8")
        else:
            payload = json.dumps(body).encode("utf-8")
        environ = self._environ(method, path, payload, version, headers or {})
        captured = {}

        def start_response(status, response_headers, exc_info=None):
            captured["status"] = int(status.split(" ", 1)[0])
            captured["headers"] = response_headers

        with _connection_kept():
            response = self._handler(environ, start_response)
            try:
                content = b"".join(response)
            finally:
                response.close()  # sends request_finished
        headers_map = CaseInsensitiveMapping(dict(captured["headers"]))
        return Result(captured["status"], headers_map, _decode(content))

    # --- internals ------------------------------------------------------------

    def _roles(self):
        if self.roles is not None:
            return self.roles
        return ["admin"] if self.token == "admin" else []

    def _identity_headers(self):
        headers = {}
        if self.token:
            headers["X-Auth-Token"] = self.token
        if self._roles():
            headers["X-Roles"] = ",".join(self._roles())
        return headers

    def _identity(self):
        user, _, project = self.token.partition(":")
        return RequestContext(user_id=user, project_id=project or user, roles=self._roles())

    def _environ(self, method, path, payload, version, extra_headers):
        parts = urlsplit(path)
        environ = {
            "REQUEST_METHOD": method.upper(),
            "SCRIPT_NAME": self.script_name,
            "PATH_INFO": parts.path or "/",
            "QUERY_STRING": parts.query,
            "SERVER_NAME": _host_name(),
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(payload),
            "wsgi.errors": io.StringIO(),
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        headers = {"Accept": "application/json"}
        headers.update(self._identity_headers())
        version = version if version is not None else self.version
        if version:
            headers["OpenStack-API-Version"] = f"placement {version}"
        headers.update(self.headers)
        headers.update(extra_headers)
        if payload:
            headers.setdefault("Content-Type", "application/json")
            headers["Content-Length"] = str(len(payload))
        for name, value in headers.items():
            if value is None:
                continue
            key = name.upper().replace("-", "_")
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                key = "HTTP_" + key
            environ[key] = str(value)
        if self.token:
            environ[IN_PROCESS_IDENTITY] = self._identity()
        return environ


def _host_name():
    """A Host that passes ALLOWED_HOSTS (location URLs are built from it)."""
    for host in settings.ALLOWED_HOSTS:
        if host and host != "*" and not host.startswith("."):
            return host
    return "localhost"


def _decode(content):
    if not content:
        return None
    text = content.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text
