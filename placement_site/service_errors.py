"""How the UI, the admin and the candidates page catch a service's refusal.

Services raise domain errors (placement_site.domain_errors.DomainError:
`.message`, `.code`); some still raise the older HTTP-shaped PlacementError
(`.detail`). This module is the one place that knows both, so every page
catches SERVICE_ERRORS and shows error_message(exc).
"""
from placement_site import domain_errors
from placement_site.api.exceptions import ConcurrentUpdate, PlacementError

SERVICE_ERRORS = (domain_errors.DomainError, PlacementError)


def error_message(exc):
    """The refusal in Placement's words, on one line."""
    text = exc.message if isinstance(exc, domain_errors.DomainError) else exc.detail
    return " ".join(str(text).split())


def error_code(exc):
    """Placement's error code of the refusal (placement.undefined_code when it has none)."""
    return exc.code


def is_concurrent_update(exc):
    """True when a generation moved underneath the write (reload, then try again)."""
    return isinstance(exc, (domain_errors.ConcurrentUpdate, ConcurrentUpdate))
