"""One route table: the Placement API, then the operator pages and the admin."""
from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt

from placement_site.api.errors import error_response
from placement_site.api.root import RootViewSet
from placement_site.api.routes import route


@csrf_exempt
def not_found(request, *args, **kwargs):
    return error_response(request, 404, "")


urlpatterns = [
    route("", RootViewSet, {"get": "retrieve"}),
    path("", include("providers.api.urls")),
    path("", include("allocations.api.urls")),
    path("", include("candidates.api.urls")),
    path("admin/", admin.site.urls),
    path("ui/", include("placement_site.ui_urls")),
    # The admin's CSS/JS straight from the app directories (no collectstatic, no
    # separate web server needed); the files are small and the pages staff-only.
    re_path(r"^static/(?P<path>.+)$", serve_static, {"insecure": True}),
    re_path(r"^.*$", not_found, name="unmatched"),  # metrics label it "unmatched"
]

handler404 = not_found
