"""The allocations app's operator pages, composed under /ui/ (namespace "ui") by placement_site.urls."""
from django.urls import path

from allocations.ui import consumer_edits, consumers, overview, reverts

urlpatterns = [
    path("", overview.dashboard, name="dashboard"),
    path("status/", overview.status, name="status"),
    path("usages/", overview.usages, name="usages"),
    path("usages/csv", overview.usages_csv, name="usages-csv"),
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
]
