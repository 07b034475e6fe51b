"""One route table: the Placement API, then the operator pages (each app's ui_urls) and the
admin.

The project composes the apps' routes here; no app and nothing of the foundation
imports it.
"""
from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.http import Http404, HttpResponsePermanentRedirect
from django.urls import Resolver404, include, path, re_path, resolve
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from console.login import login as console_login
from foundation.api.errors import error_response
from foundation.api.middleware import is_api_path
from foundation.api.root import RootViewSet
from foundation.api.routes import route


@csrf_exempt
def not_found(request, exception=None):
    """Placement's JSON 404 on the API; an HTML 404 on the pages."""
    if is_api_path(request.path_info):
        return error_response(request, 404, "")
    return defaults.page_not_found(request, exception or Http404())


def append_slash(request):
    """A page path without its trailing slash: Django's slash redirect when the page
    exists. (APPEND_SLASH stays off for the API, where Placement treats a trailing
    slash as another, unknown path.)"""
    try:
        match = resolve(f"{request.path_info}/")
    except Resolver404:
        match = None
    # Catch-alls (ours, the admin's) match every path: they are no page.
    if match is None or match.url_name == "unmatched" or match.func.__name__ == "catch_all_view":
        return not_found(request)
    return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))


urlpatterns = [
    route("", RootViewSet, {"get": "retrieve"}),
    path("", include("providers.api.urls")),
    path("", include("allocations.api.urls")),
    path("", include("candidates.api.urls")),
    # The operator console: every page, one "ui" namespace.
    path("ui/", include(("console.urls", "ui"))),
    # A page path without its trailing slash is redirected (or a 404) here, before
    # the admin's own catch-all would send it through the login first.
    re_path(r"^(?:admin|ui)(?:/.*)?(?<!/)$", append_slash),
    # One login for the console and the admin (Keystone or local accounts).
    path("admin/login/", console_login, name="login"),
    path("admin/", admin.site.urls),
    # The admin's CSS/JS straight from the app directories (no collectstatic, no
    # separate web server needed); the files are small and the pages staff-only.
    re_path(r"^static/(?P<path>.+)$", serve_static, {"insecure": True}),
    # What browsers ask for unasked: the pages' icon (console/static/ui/favicon.svg).
    path("favicon.ico", serve_static, {"path": "ui/favicon.svg", "insecure": True}),
    re_path(r"^.*$", not_found, name="unmatched"),  # metrics label it "unmatched"
]

handler404 = not_found
