"""The candidates app's operator pages, composed under /ui/ (namespace "ui") by placement_site.urls."""
from django.urls import path

from candidates import views

urlpatterns = [
    path("candidates/", views.candidates, name="candidates"),
    path("candidates.csv", views.candidates_csv, name="candidates-csv"),
    path("candidates/why-not/", views.why_not, name="why-not"),
    path("candidates/why-not.json", views.why_not_json, name="why-not-json"),
]
