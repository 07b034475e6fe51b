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
    *[path(f"providers/<str:uuid>/{section}", provider_views.provider_edit,
           {"section": section}, name=f"provider-{section}")
      for section in provider_views.SECTIONS],
    path("usages/", allocation_views.usages, name="usages"),
    path("consumers/", allocation_views.consumer_list, name="consumers"),
    path("consumers/<str:uuid>/", allocation_views.consumer_detail, name="consumer"),
    path("consumers/<str:uuid>/move", allocation_views.consumer_move, name="consumer-move"),
    path("consumers/<str:uuid>/remove", allocation_views.consumer_remove,
         name="consumer-remove"),
    path("candidates/", candidate_views.candidates, name="candidates"),
]
