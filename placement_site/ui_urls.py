"""The operator UI under /ui/: each app's pages from its own views; staff login via the admin."""
from django.urls import path

from allocations import views as allocation_views
from candidates import views as candidate_views
from providers import bulk_views, capacity_views, catalogue_views
from providers import views as provider_views

app_name = "ui"

urlpatterns = [
    path("", allocation_views.dashboard, name="dashboard"),
    path("providers/", provider_views.provider_tree, name="providers"),
    path("providers.csv", provider_views.providers_csv, name="providers-csv"),
    path("providers/<str:uuid>/subtree/", provider_views.provider_subtree,
         name="provider-subtree"),
    path("providers/<str:uuid>/", provider_views.provider_detail, name="provider"),
    *[path(f"providers/<str:uuid>/{section}", provider_views.provider_edit,
           {"section": section}, name=f"provider-{section}")
      for section in provider_views.SECTIONS],
    path("capacity/", capacity_views.capacity, name="capacity"),
    path("status/", allocation_views.status, name="status"),
    path("resource-classes/", catalogue_views.resource_classes, name="resource-classes"),
    path("resource-classes/<str:name>/delete", catalogue_views.resource_class_delete,
         name="resource-class-delete"),
    path("traits/", catalogue_views.traits, name="traits"),
    path("traits/<str:name>/delete", catalogue_views.trait_delete, name="trait-delete"),
    path("bulk/", bulk_views.bulk_edit, name="bulk"),
    path("bulk/preview", bulk_views.bulk_preview, name="bulk-preview"),
    path("bulk/apply", bulk_views.bulk_apply, name="bulk-apply"),
    path("usages/", allocation_views.usages, name="usages"),
    path("usages/csv", allocation_views.usages_csv, name="usages-csv"),
    path("consumers/", allocation_views.consumer_list, name="consumers"),
    path("consumers/<str:uuid>/", allocation_views.consumer_detail, name="consumer"),
    path("consumers/<str:uuid>/move", allocation_views.consumer_move, name="consumer-move"),
    path("consumers/<str:uuid>/remove", allocation_views.consumer_remove,
         name="consumer-remove"),
    path("candidates/", candidate_views.candidates, name="candidates"),
    path("candidates/why-not/", candidate_views.why_not, name="why-not"),
    path("candidates/why-not.json", candidate_views.why_not_json, name="why-not-json"),
]
