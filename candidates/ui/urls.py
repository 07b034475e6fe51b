"""The candidates app's operator pages, composed under /ui/ (namespace "ui") by placement_site.urls."""
from django.urls import path

from candidates.ui import pages, why_not

urlpatterns = [
    path("candidates/", pages.candidates, name="candidates"),
    path("candidates.csv", pages.candidates_csv, name="candidates-csv"),
    path("candidates/why-not/", why_not.why_not, name="why-not"),
    path("candidates/why-not.json", why_not.why_not_json, name="why-not-json"),
]
