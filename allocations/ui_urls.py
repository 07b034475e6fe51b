"""The allocations app's operator pages, composed under /ui/ (namespace "ui") by placement_site.urls."""
from django.urls import path

from allocations import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("status/", views.status, name="status"),
    path("usages/", views.usages, name="usages"),
    path("usages/csv", views.usages_csv, name="usages-csv"),
    path("consumers/", views.consumer_list, name="consumers"),
    path("consumers/<str:uuid>/", views.consumer_detail, name="consumer"),
    path("consumers/<str:uuid>/move", views.consumer_move, name="consumer-move"),
    path("consumers/<str:uuid>/remove", views.consumer_remove, name="consumer-remove"),
]
