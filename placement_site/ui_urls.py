"""The operator UI under /ui/: each app's pages from its own views; staff login via the admin."""
from django.urls import path

from allocations import views as allocation_views
from candidates import views as candidate_views
from providers import views as provider_views

app_name = "ui"

urlpatterns = [
    path("", allocation_views.dashboard, name="dashboard"),
    path("providers/", provider_views.provider_tree, name="providers"),
    path("providers/<str:uuid>/", provider_views.provider_detail, name="provider"),
    path("providers/<str:uuid>/inventory", provider_views.provider_inventory,
         name="provider-inventory"),
    path("providers/<str:uuid>/traits", provider_views.provider_traits, name="provider-traits"),
    path("providers/<str:uuid>/aggregates", provider_views.provider_aggregates,
         name="provider-aggregates"),
    path("usages/", allocation_views.usages, name="usages"),
    path("candidates/", candidate_views.candidates, name="candidates"),
]
