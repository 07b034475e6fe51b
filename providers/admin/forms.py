"""What every admin page of the providers app writes through: forms whose save() calls
a service, and the mixins that show a refusal as a form error."""
from django import forms
from django.contrib.admin.widgets import RelatedFieldWidgetWrapper
from django.db import transaction
from django.forms.models import BaseInlineFormSet

from foundation.domain_errors import ConcurrentUpdate, DomainError, error_message
from providers.services.dry_run import refusal


class ServiceInlineFormSet(BaseInlineFormSet):
    """Inline rows that describe a wanted set; the parent ServiceModelForm saves them.

    The admin builds its inline formsets for the parent form's instance right
    after the form, so each one registers there for the form's validation.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.__dict__.setdefault("_service_formsets", []).append(self)

    def kept_forms(self):
        """The rows that stay: stored rows not marked for deletion, and filled-in new ones."""
        deleted = self.deleted_forms
        return [form for form in self.forms if form not in deleted
                and (form.instance.pk is not None or form.has_changed())]

    def save(self, commit=True):
        # Written by the parent form through the services; the admin's change
        # message reads these lists.
        self.new_objects, self.changed_objects, self.deleted_objects = [], [], []
        return []


class ServiceModelForm(forms.ModelForm):
    """An admin form whose save() calls the services, as the last step of validation.

    Django's admin validates the form and its inlines and only then saves, with
    no way back to the form; but some refusals are known only to the services
    (a class in use, a stale generation). So once the form and its inline
    formsets are valid, full_clean() calls save() inside a savepoint: a refusal
    rolls the savepoint back and becomes a form error, the typed values kept;
    success leaves the writes to the admin's own transaction, and `saved` is
    the object the admin goes on with (ServiceAdminMixin.save_form).
    """

    saved = None

    def inline_formsets(self):
        return self.instance.__dict__.get("_service_formsets", [])

    def full_clean(self):
        super().full_clean()
        if not self.is_bound or self.errors:
            return
        if not all([formset.is_valid() for formset in self.inline_formsets()]):
            return
        self.check_before_save()
        if self.errors:
            return
        try:
            with transaction.atomic():
                self.saved = self.save()
        except DomainError as exc:
            self.add_error(None, self.refusal_message(exc))

    def check_before_save(self):
        """What the form asks before writing, as form errors (nothing by default)."""

    def refusal_message(self, exc):
        message = error_message(exc)
        if isinstance(exc, ConcurrentUpdate):
            return (f"Not saved: someone changed this {self._meta.model._meta.verbose_name} "
                    f"meanwhile ({message}). Reload the page to see the current state.")
        return message

    def save(self, commit=True):
        """Write the form through the services; returns the saved object."""
        raise NotImplementedError


class ServiceAdminMixin:
    """Admin whose forms save through the services and whose deletes ask the services.

    The write itself happened while the form was validated (ServiceModelForm);
    the admin's save hooks only hand its result on. A delete the service would
    refuse is shown on the confirmation page, like protected objects, and
    not offered.
    """

    def save_form(self, request, form, change):
        return form.saved

    def save_model(self, request, obj, form, change):
        """Nothing left to write: the form's validation saved through the services."""

    def save_related(self, request, form, formsets, change):
        for formset in formsets:
            self.save_formset(request, form, formset, change=change)

    def get_deleted_objects(self, objs, request):
        """Django's answer, plus the service's refusal of any delete (tried, then rolled back)."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        refusals = []
        for obj in objs:
            refused = refusal(lambda: self.delete_model(request, obj))
            if refused is not None:
                refusals.append(f"{obj}: {error_message(refused)}")
        return deleted, counts, perms_needed, [*protected, *refusals]

    def get_actions(self, request):
        # Bulk deletes would bypass the services; delete one object at a time.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


class NoRelatedLinksMixin:
    """No add/change/delete/view pop-up links next to foreign-key selects.

    Picking a parent, a class or a trait should not invite editing (or
    deleting) that other object from inside this form.
    """

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        widget = getattr(field, "widget", None)
        if isinstance(widget, RelatedFieldWidgetWrapper):
            widget.can_add_related = widget.can_change_related = False
            widget.can_delete_related = widget.can_view_related = False
        return field


# --------------------------------------------------------------------------
# Resource providers
# --------------------------------------------------------------------------
