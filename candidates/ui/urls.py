"""The candidates app's operator pages, composed under /ui/ (namespace "ui") by placement_site.urls."""
from django.urls import path

from candidates.ui import pages

urlpatterns = [
    path("candidates/", pages.candidates, name="candidates"),
    path("candidates.csv", pages.candidates_csv, name="candidates-csv"),
    path("candidates/why-not/", pages.why_not, name="why-not"),
    path("candidates/why-not.json", pages.why_not_json, name="why-not-json"),
]
