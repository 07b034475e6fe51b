"""The operator UI under /ui/ (providers/views.py); staff login via the admin."""
from django.urls import path

from providers import views

app_name = "ui"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("providers/", views.provider_tree, name="providers"),
    path("providers/<str:uuid>/", views.provider_detail, name="provider"),
    path("providers/<str:uuid>/inventory", views.provider_inventory, name="provider-inventory"),
    path("providers/<str:uuid>/traits", views.provider_traits, name="provider-traits"),
    path("providers/<str:uuid>/aggregates", views.provider_aggregates,
         name="provider-aggregates"),
    path("usages/", views.usages, name="usages"),
    path("candidates/", views.candidates, name="candidates"),
]
