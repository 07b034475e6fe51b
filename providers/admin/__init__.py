"""Django admin for providers, resource classes, traits and the change log.

Every write goes through providers.services (STYLE.md §4). The admin forms are
ServiceModelForms (forms.py): their save() calls the services, and it runs as the last
step of validation, so a refusal (a name taken, a class in use, a stale generation) is
a form error shown with the typed values kept. The inline formsets are never saved
through the ORM; they only describe the wanted inventory / trait / aggregate sets,
which the provider form's save() hands to the services.
"""
from django.contrib import admin

from providers.admin import catalogue, providers  # noqa: F401  (they register)

# The admin's "View site" link leads to the operator pages, not the JSON API root.
admin.site.site_url = "/ui/"
admin.site.site_header = "Placement administration"
admin.site.site_title = "Placement admin"
