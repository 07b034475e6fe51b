"""Who is writing: the actor and request id the change log records with every write.

Each entry point sets them once, for everything it does:

* the API: PlacementAuthMiddleware, from the request context (user id, project id)
  and the request id of x-openstack-request-id;
* the operator UI and the admin: LoginActorMiddleware, from the Django login
  (``ui:<login>`` / ``admin:<login>``), with the page request's id;
* management commands: ActorCommandMixin (``command:<name>``, one request id per run).

Services never receive the actor as an argument: providers.services.change_log reads
it from here when it records, so every caller of a service is covered.

The outermost entry point wins: a command that drives the API in-process
(placement_site.inprocess) records its writes as the command, not as the token it
sends. A write made outside any entry point (a Django shell, a migration hook) is
recorded as SYSTEM.
"""
import contextvars
import uuid
from contextlib import contextmanager

SYSTEM = "system"


class Actor:
    """An actor name with the project (API callers) and the request id of the entry point.

    `name` may be a zero-argument callable, resolved at the first write: the UI's
    login is then only looked up by requests that write (the page reads it anyway).
    """

    __slots__ = ("_name", "project_id", "request_id")

    def __init__(self, name, project_id="", request_id=""):
        self._name = name
        self.project_id = project_id or ""
        self.request_id = request_id or ""

    @property
    def name(self):
        if callable(self._name):
            self._name = self._name() or SYSTEM
        return self._name or SYSTEM


_current = contextvars.ContextVar("placement_actor", default=None)
_NOBODY = Actor(SYSTEM)


def current_actor():
    """The Actor of the running entry point (SYSTEM when there is none)."""
    return _current.get() or _NOBODY


def new_request_id():
    """A request id in the API's form (req-<uuid4>)."""
    return f"req-{uuid.uuid4()}"


@contextmanager
def acting_as(name, project_id="", request_id=""):
    """Attribute the writes made inside the block to `name` (see Actor).

    Leaves an actor already set in place (the outermost entry point wins), and
    restores the previous state on exit, so a thread reused for the next request
    starts clean.
    """
    if _current.get() is not None:
        yield _current.get()
        return
    actor = Actor(name, project_id, request_id)
    token = _current.set(actor)
    try:
        yield actor
    finally:
        _current.reset(token)


class ActorCommandMixin:
    """For management commands that write: their writes are ``command:<name>``.

    Put it before BaseCommand: ``class Command(ActorCommandMixin, BaseCommand)``.
    """

    def execute(self, *args, **options):
        name = type(self).__module__.rsplit(".", 1)[-1]
        with acting_as(f"command:{name}", request_id=new_request_id()):
            return super().execute(*args, **options)
