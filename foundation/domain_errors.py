"""The one error base: what went wrong, in Placement's words and code.

Foundation: every app may import it; it imports nothing of theirs.

Services, selectors, rules and the API's plumbing raise subclasses of the kinds below
(each app keeps its own in <app>/exceptions.py, the plumbing's are in
foundation/api/exceptions.py); none of them knows HTTP. Only the API edge,
foundation/api/exceptions.py, turns them into responses (the kind decides the
status); the UI, the admin and the commands catch DomainError and show
error_message(exc) to people.
"""

# Placement's error codes, verbatim (http.md §6.2).
DEFAULT_CODE = "placement.undefined_code"
CONCURRENT_UPDATE = "placement.concurrent_update"
DUPLICATE_NAME = "placement.duplicate_name"
INVENTORY_INUSE = "placement.inventory.inuse"
PROVIDER_IN_USE = "placement.resource_provider.inuse"
PROVIDER_CANNOT_DELETE_PARENT = "placement.resource_provider.cannot_delete_parent"
RESOURCE_PROVIDER_NOT_FOUND = "placement.resource_provider.not_found"
QUERYPARAM_DUPLICATE_KEY = "placement.query.duplicate_key"
QUERYPARAM_BAD_VALUE = "placement.query.bad_value"
QUERYPARAM_MISSING_VALUE = "placement.query.missing_value"


class DomainError(Exception):
    """A refused operation. `message` is Placement's wording, `code` its error code."""

    code = DEFAULT_CODE

    def __init__(self, message="", code=None, headers=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.headers = headers or {}  # what the answer must say besides (Allow: ...)


class InvalidInput(DomainError):
    """The request itself is wrong (the API answers 400)."""


class NotFound(DomainError):
    """Something named does not exist (404)."""


class Forbidden(DomainError):
    """The caller may not do this (403)."""


class Conflict(DomainError):
    """The data's current state forbids the operation (409)."""


class ConcurrentUpdate(Conflict):
    """A generation moved underneath the write (409 placement.concurrent_update)."""

    code = CONCURRENT_UPDATE


def error_message(exc):
    """The refusal in Placement's words, on one line (for a page or a command)."""
    return " ".join(str(exc.message).split())
