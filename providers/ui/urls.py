"""The providers app's operator pages, composed under /ui/ (namespace "ui") by placement_site.urls."""
from django.urls import path

from providers.ui import bulk, capacity, catalogue, host, provider_page, trees

urlpatterns = [
    path("providers/", trees.provider_tree, name="providers"),
    path("providers.csv", trees.providers_csv, name="providers-csv"),
    path("providers/<str:uuid>/subtree/", trees.provider_subtree, name="provider-subtree"),
    path("providers/<str:uuid>/", provider_page.provider_detail, name="provider"),
    path("providers/<str:uuid>/consumers.csv", host.consumers_csv,
         name="provider-consumers-csv"),
    *[path(f"providers/<str:uuid>/{section}", provider_page.provider_edit,
           {"section": section}, name=f"provider-{section}")
      for section in provider_page.SECTIONS],
    path("capacity/", capacity.capacity, name="capacity"),
    path("resource-classes/", catalogue.resource_classes, name="resource-classes"),
    path("resource-classes/<str:name>/delete", catalogue.resource_class_delete,
         name="resource-class-delete"),
    path("traits/", catalogue.traits, name="traits"),
    path("traits/<str:name>/delete", catalogue.trait_delete, name="trait-delete"),
    path("bulk/", bulk.bulk_edit, name="bulk"),
    path("bulk/preview", bulk.bulk_preview, name="bulk-preview"),
    path("bulk/apply", bulk.bulk_apply, name="bulk-apply"),
    path("bulk/batch/<str:request_id>/", bulk.bulk_batch, name="bulk-batch"),
    path("bulk/batch/<str:request_id>/revert", bulk.bulk_batch_revert,
         name="bulk-batch-revert"),
]
