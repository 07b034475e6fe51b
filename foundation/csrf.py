"""Django's CSRF refusal for the operator UI and admin (HTML applications): the HTML
page Django explains it with to a browser, Placement's JSON error body (403) to a
client that prefers JSON, which could make nothing of the page."""
from django.views.csrf import csrf_failure as html_csrf_failure

from foundation.api import errors


def csrf_failure(request, reason=""):
    if request.get_preferred_type(["text/html", "application/json"]) == "application/json":
        return errors.error_response(
            request, 403, f"CSRF verification failed. Request aborted. {reason}")
    return html_csrf_failure(request, reason)
