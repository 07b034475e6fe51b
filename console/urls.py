"""Every page of the operator console, composed under /ui/ (namespace "ui") by
placement_site.urls. Each view passes through console.door (its `@door(...)`)."""
from django.urls import path

from console import overview, search
from console.candidates import pages as candidate_pages
from console.candidates import why_not
from console.history import pages as history_pages
from console.consumers import consumer_edits, consumers, reverts
from console.providers import (bulk, bulk_membership, capacity, catalogue, host, provider_page,
                               trees)

urlpatterns = [
    path("", overview.dashboard, name="dashboard"),
    path("status/", overview.status, name="status"),
    path("usages/", overview.usages, name="usages"),
    path("usages/csv", overview.usages_csv, name="usages-csv"),
    path("search/", search.search, name="search"),
    # providers, their trees, the cloud's capacity and catalogue, bulk edits
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
    # usage and capacity over time, and what changed (provider, tree, aggregate, class)
    path("history/", history_pages.history, name="history"),
    path("history.csv", history_pages.history_csv, name="history-csv"),
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
    path("bulk/traits-aggregates/", bulk_membership.bulk_membership, name="bulk-membership"),
    path("bulk/traits-aggregates/preview", bulk_membership.bulk_membership_preview,
         name="bulk-membership-preview"),
    path("bulk/traits-aggregates/apply", bulk_membership.bulk_membership_apply,
         name="bulk-membership-apply"),
    path("bulk/traits-aggregates/batch/<str:request_id>/",
         bulk_membership.bulk_membership_batch, name="bulk-membership-batch"),
    path("bulk/traits-aggregates/batch/<str:request_id>/revert",
         bulk_membership.bulk_membership_batch_revert, name="bulk-membership-batch-revert"),
    # consumers and their allocations
    path("consumers/", consumers.consumer_list, name="consumers"),
    path("consumers/<str:uuid>/", consumers.consumer_detail, name="consumer"),
    path("consumers/<str:uuid>/move-to", consumers.consumer_move_target,
         name="consumer-move-target"),
    path("consumers/<str:uuid>/move", consumers.consumer_move, name="consumer-move"),
    path("consumers/<str:uuid>/move-host-to", consumer_edits.consumer_move_tree_page,
         name="consumer-move-tree-target"),
    path("consumers/<str:uuid>/move-host", consumer_edits.consumer_move_tree,
         name="consumer-move-tree"),
    path("consumers/<str:uuid>/add", consumer_edits.consumer_add, name="consumer-add"),
    path("consumers/<str:uuid>/remove-one", consumers.consumer_remove_one,
         name="consumer-remove-one"),
    path("consumers/<str:uuid>/remove", consumers.consumer_remove,
         name="consumer-remove"),
    path("changes/<int:record_id>/revert", reverts.change_revert, name="change-revert"),
    # the allocation candidates explorer and "why not?"
    path("candidates/", candidate_pages.candidates, name="candidates"),
    path("candidates.csv", candidate_pages.candidates_csv, name="candidates-csv"),
    path("candidates/why-not/", why_not.why_not, name="why-not"),
    path("candidates/why-not.json", why_not.why_not_json, name="why-not-json"),
]
