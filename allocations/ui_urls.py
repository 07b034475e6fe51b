"""The allocations app's operator pages, composed under /ui/ (namespace "ui") by placement_site.urls."""
from django.urls import path

from allocations import consumer_views, views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("status/", views.status, name="status"),
    path("usages/", views.usages, name="usages"),
    path("usages/csv", views.usages_csv, name="usages-csv"),
    path("consumers/", consumer_views.consumer_list, name="consumers"),
    path("consumers/<str:uuid>/", consumer_views.consumer_detail, name="consumer"),
    path("consumers/<str:uuid>/move-to", consumer_views.consumer_move_target,
         name="consumer-move-target"),
    path("consumers/<str:uuid>/move", consumer_views.consumer_move, name="consumer-move"),
    path("consumers/<str:uuid>/remove-one", consumer_views.consumer_remove_one,
         name="consumer-remove-one"),
    path("consumers/<str:uuid>/remove", consumer_views.consumer_remove,
         name="consumer-remove"),
]
