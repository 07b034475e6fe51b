"""How the UI, the admin and the candidates page show a service's refusal.

Services raise domain errors (placement_site.domain_errors.DomainError: `.message`,
`.code`); every page catches SERVICE_ERRORS and shows error_message(exc).
"""
from placement_site import domain_errors

SERVICE_ERRORS = (domain_errors.DomainError,)


def error_message(exc):
    """The refusal in Placement's words, on one line."""
    return " ".join(str(exc.message).split())


def error_code(exc):
    """Placement's error code of the refusal (placement.undefined_code when it has none)."""
    return exc.code


def is_concurrent_update(exc):
    """True when a generation moved underneath the write (reload, then try again)."""
    return isinstance(exc, domain_errors.ConcurrentUpdate)
