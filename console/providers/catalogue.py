"""Resource class and trait pages of the operator UI (/ui/resource-classes/, /ui/traits/).

Each lists its names with how much they are used (console.providers.catalogue_reads,
a fixed number of queries) and creates or deletes custom ones through the same
services as the API. A delete is confirmed first; the services keep standard
names and names in use from being deleted, and their refusals (Placement's
messages) are shown as messages.
"""
from urllib.parse import urlencode

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from console.door import (
    CREATE_RESOURCE_CLASS,
    DELETE_RESOURCE_CLASS,
    DELETE_TRAIT,
    LIST_RESOURCE_CLASSES,
    LIST_TRAITS,
    UPDATE_TRAIT,
    door,
)
from foundation.domain_errors import DomainError, error_message
from console.providers import catalogue_forms
from console.links import row_url
from console.providers import catalogue_reads as selectors
from providers.services import resource_classes as resource_class_services
from providers.services import traits as trait_services
from providers.services.dry_run import refusal


def _create(request, form):
    """Save a create form; True when saved (the caller redirects), else the form
    carries the refusal."""
    if not form.is_valid():
        return False
    try:
        summary = form.save()
    except DomainError as exc:
        form.add_error("name", error_message(exc))
        return False
    messages.success(request, summary)
    return True


def _delete(request, delete, name, kind, back):
    """Delete one name after the operator confirmed it: the first POST shows what is
    about to go (a page of its own) unless the service would refuse, whose refusal
    is shown at once; the confirming POST (`confirm`) calls the service. Back to
    `back` with a message."""
    if "confirm" in request.POST:
        refused = None
        try:
            delete(name=name)
        except DomainError as exc:
            refused = exc
    else:
        refused = refusal(lambda: delete(name=name))
        if refused is None:
            return render(request, "ui/confirm_delete.html", {
                "kind": kind, "name": name, "back": back, "action": request.path,
                "repost": [(key, value) for key, value in request.POST.items()
                           if key != "csrfmiddlewaretoken"]})
    if refused is not None:
        messages.error(request, error_message(refused))
    elif "confirm" in request.POST:
        messages.success(request, f"Deleted {kind} {name}.")
    return redirect(back)


def _catalogue_page(request, form_class, page, template, rows_of, delete, **context):
    """A list of names (custom ones first) with a create form: GET shows it, a POST
    that creates redirects back to `page`; `rows_of()` reads the rows (none on a redirect).
    `delete`: the page deleting one custom name (a cloud may have thousands)."""
    form = form_class(request.POST or None)
    if request.method == "POST" and _create(request, form):
        return redirect(page)
    rows = rows_of()
    return render(request, template, {
        "form": form, **context, "delete_url": row_url(delete),
        "custom": [row for row in rows if not row.standard],
        "standard": [row for row in rows if row.standard],
    })


@door(read=LIST_RESOURCE_CLASSES, write=CREATE_RESOURCE_CLASS)
@require_http_methods(["GET", "POST"])
def resource_classes(request):
    return _catalogue_page(request, catalogue_forms.ResourceClassForm, "ui:resource-classes",
                           "ui/resource_classes.html", selectors.resource_class_rows,
                           "ui:resource-class-delete")


@door(read=LIST_RESOURCE_CLASSES, write=DELETE_RESOURCE_CLASS)
@require_POST
def resource_class_delete(request, name):
    return _delete(request, resource_class_services.resource_class_delete, name,
                   "resource class", reverse("ui:resource-classes"))


@door(read=LIST_TRAITS, write=UPDATE_TRAIT)
@require_http_methods(["GET", "POST"])
def traits(request):
    query = request.GET.get("q", "").strip()
    return _catalogue_page(request, catalogue_forms.TraitForm, "ui:traits", "ui/traits.html",
                           lambda: selectors.trait_rows(query), "ui:trait-delete", q=query)


@door(read=LIST_TRAITS, write=DELETE_TRAIT)
@require_POST
def trait_delete(request, name):
    query = request.POST.get("q", "").strip()   # back to the list as it was filtered
    return _delete(request, trait_services.trait_delete, name, "trait",
                   reverse("ui:traits") + (f"?{urlencode({'q': query})}" if query else ""))
