"""Django admin for providers, resource classes and traits.

Every write goes through providers.services (STYLE.md §4): save_model,
save_related and delete_model call the same functions as the API; the
inline formsets are never saved through the ORM, they only describe the
wanted inventory / trait / aggregate sets. The forms reuse the pure rules
(providers.rules) so invalid input is a form error before anything is
written. A service error (e.g. a class in use, an unknown name) rolls the
whole admin transaction back and re-renders the form with the message; a
generation conflict reloads the page so the operator sees the current state.
"""
import re
import uuid as uuidlib

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import RelatedFieldWidgetWrapper
from django.shortcuts import redirect
from mptt.admin import MPTTModelAdmin
from mptt.forms import MPTTAdminForm

from placement_site.domain_errors import ConcurrentUpdate, DomainError as PlacementError
from providers import rules
from providers.forms import GenerationField, inventory_record_errors
from providers.models import (
    Inventory, ProviderAggregate, ProviderTrait, ResourceClass, ResourceProvider, Trait,
)
from providers.services import aggregates as aggregate_services
from providers.services import inventories as inventory_services
from providers.services import provider_traits as provider_trait_services
from providers.services import providers as provider_services
from providers.services import resource_classes as resource_class_services
from providers.services import traits as trait_services
from providers.standard import is_standard_resource_class, is_standard_trait

# The admin's "View site" link leads to the operator pages, not the JSON API root.
admin.site.site_url = "/ui/"
admin.site.site_header = "Placement administration"
admin.site.site_title = "Placement admin"

CUSTOM_NAME_RE = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
CUSTOM_NAME_HELP = ("CUSTOM_ followed by upper-case letters, digits and underscores "
                    "(at most 255 characters).")


def validate_custom_name(value):
    if not CUSTOM_NAME_RE.match(value) or len(value) > 255:
        raise forms.ValidationError(f"Invalid name {value!r}: use {CUSTOM_NAME_HELP}")


class ServiceAdminMixin:
    """Turn service errors into form errors or messages instead of a 500.

    Django's admin wraps add/change/delete in one transaction; a PlacementError
    raised by a service leaves that transaction (rolling back everything the
    request wrote), then the form is shown again with the error attached.
    """

    def get_form(self, request, obj=None, **kwargs):
        form_class = super().get_form(request, obj, **kwargs)
        error = getattr(request, "_placement_error", None)
        if error is None:
            return form_class

        class FormWithServiceError(form_class):
            def clean(self):
                cleaned = super().clean()
                raise forms.ValidationError(error_text(error))

        FormWithServiceError.__name__ = form_class.__name__
        return FormWithServiceError

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ConcurrentUpdate as exc:
            messages.error(request, (
                f"Not saved: someone changed this {self.opts.verbose_name} meanwhile "
                f"({error_text(exc)}). This page now shows the current state; please "
                "review it and save again."))
            return redirect(request.get_full_path())
        except PlacementError as exc:
            request._placement_error = exc
            return super().changeform_view(request, object_id, form_url, extra_context)

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except PlacementError as exc:
            messages.error(request, f"Not deleted: {error_text(exc)}")
            return redirect(request.path.rsplit("/delete/", 1)[0] + "/change/")

    def get_actions(self, request):
        # Bulk deletes would bypass the services; delete one object at a time.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


def error_text(exc):
    return " ".join(str(getattr(exc, "detail", exc)).split())


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

class InventoryInlineForm(forms.ModelForm):
    total = forms.IntegerField(min_value=1, max_value=rules.MAX_INT)
    reserved = forms.IntegerField(min_value=0, max_value=rules.MAX_INT, initial=0)
    min_unit = forms.IntegerField(min_value=1, max_value=rules.MAX_INT, initial=1)
    max_unit = forms.IntegerField(min_value=1, max_value=rules.MAX_INT, initial=rules.MAX_INT)
    step_size = forms.IntegerField(min_value=1, max_value=rules.MAX_INT, initial=1)
    allocation_ratio = forms.FloatField(max_value=3.40282e38, initial=1.0)

    class Meta:
        model = Inventory
        fields = ["resource_class", *rules.INVENTORY_FIELDS]

    def clean(self):
        cleaned = super().clean()
        rc = cleaned.get("resource_class")
        if rc is None or self.errors or cleaned.get("DELETE"):
            return cleaned
        record = {f: cleaned[f] for f in rules.INVENTORY_FIELDS}
        provider_uuid = self.instance.provider.uuid if self.instance.provider_id else "(new)"
        for field, message in inventory_record_errors(rc.name, provider_uuid, record).items():
            self.add_error(field, message)
        return cleaned

    def record(self):
        return rules.with_defaults({f: self.cleaned_data[f] for f in rules.INVENTORY_FIELDS})


class InventoryInline(NoRelatedLinksMixin, admin.TabularInline):
    model = Inventory
    form = InventoryInlineForm
    extra = 1
    verbose_name_plural = "inventories"
    fields = ["resource_class", *rules.INVENTORY_FIELDS]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("resource_class", "provider")


class ProviderTraitInline(NoRelatedLinksMixin, admin.TabularInline):
    model = ProviderTrait
    fields = ["trait"]
    autocomplete_fields = ["trait"]
    extra = 1
    verbose_name = "trait"
    verbose_name_plural = "traits"

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("trait")


class ProviderAggregateForm(forms.ModelForm):
    aggregate_uuid = forms.CharField(label="Aggregate uuid", max_length=36,
                                     widget=forms.TextInput(attrs={"size": 40}))

    class Meta:
        model = ProviderAggregate
        fields = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["aggregate_uuid"].initial = self.instance.aggregate.uuid

    def clean_aggregate_uuid(self):
        value = self.cleaned_data["aggregate_uuid"].strip()
        try:
            uuidlib.UUID(value)
        except ValueError:
            raise forms.ValidationError("Enter a uuid.")
        return value


class ProviderAggregateInline(admin.TabularInline):
    model = ProviderAggregate
    form = ProviderAggregateForm
    fields = ["aggregate_uuid"]
    extra = 1
    verbose_name = "aggregate"
    verbose_name_plural = "aggregates"

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("aggregate")


class ResourceProviderForm(MPTTAdminForm):
    expected_generation = GenerationField(required=False)

    class Meta:
        model = ResourceProvider
        fields = ["name", "uuid", "parent"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "uuid" in self.fields:
            self.fields["uuid"].required = False
            self.fields["uuid"].help_text = "Leave empty to generate one."
        if self.instance.pk:
            # MPTTAdminForm already keeps the provider's own subtree out of `parent`.
            self.fields["expected_generation"].initial = self.instance.generation

    def clean_uuid(self):
        value = (self.cleaned_data.get("uuid") or "").strip()
        if not value:
            return ""
        try:
            return provider_services.normalize_uuid(value)
        except ValueError:
            raise forms.ValidationError("Enter a uuid (or leave empty).")

    def validate_unique(self):
        # An empty uuid means "generate one": do not check it for uniqueness.
        exclude = self._get_validation_exclusions()
        if not self.cleaned_data.get("uuid"):
            exclude.add("uuid")
        try:
            self.instance.validate_unique(exclude=exclude)
        except forms.ValidationError as exc:
            self._update_errors(exc)


@admin.register(ResourceProvider)
class ResourceProviderAdmin(NoRelatedLinksMixin, ServiceAdminMixin, MPTTModelAdmin):
    form = ResourceProviderForm
    list_display = ["name", "uuid", "generation", "root_name", "created_at"]
    search_fields = ["name", "uuid"]
    list_select_related = ["root"]
    list_per_page = 100
    mptt_level_indent = 20
    inlines = [InventoryInline, ProviderTraitInline, ProviderAggregateInline]
    readonly_fields = ["generation", "root", "created_at", "updated_at", "ui_link"]

    class Media:
        css = {"all": ["ui/admin.css"]}

    def get_fields(self, request, obj=None):
        fields = ["name", "uuid", "parent", "expected_generation"]
        if obj is not None:
            fields += ["generation", "root", "created_at", "updated_at", "ui_link"]
        return fields

    def get_readonly_fields(self, request, obj=None):
        readonly = list(self.readonly_fields)
        if obj is not None:
            readonly.append("uuid")  # a provider's uuid never changes
        return readonly

    @admin.display(description="root", ordering="root__name")
    def root_name(self, obj):
        return obj.root.name if obj.root_id and obj.root_id != obj.pk else "—"

    @admin.display(description="operator page")
    def ui_link(self, obj):
        from django.urls import reverse
        from django.utils.html import format_html

        return format_html('<a href="{}">{}</a>', reverse("ui:provider", args=[obj.uuid]),
                           "inventories, usage and allocations")

    def save_model(self, request, obj, form, change):
        parent = form.cleaned_data.get("parent")
        parent_uuid = parent.uuid if parent is not None else None
        if not change:
            created = provider_services.provider_create(
                name=form.cleaned_data["name"], uuid=form.cleaned_data.get("uuid") or None,
                parent_uuid=parent_uuid)
            obj.pk = created.pk
        else:
            provider_services.provider_update(
                uuid=obj.uuid, name=form.cleaned_data["name"],
                parent_uuid=parent_uuid if "parent" in form.changed_data
                else provider_services.UNCHANGED)
        obj.refresh_from_db()

    def save_related(self, request, form, formsets, change):
        """Apply the inline sets through the services, each with the running generation."""
        provider = form.instance
        generation = form.cleaned_data.get("expected_generation")
        if not change or generation is None:
            generation = provider.generation
        for formset in formsets:
            # The admin's change message reads these; nothing is saved via the ORM.
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
            kept = [f for f in formset.forms
                    if f.has_changed() or f.instance.pk is not None]
            kept = [f for f in kept if not (formset.can_delete and formset._should_delete_form(f))]
            if formset.model is Inventory:
                wanted = {f.cleaned_data["resource_class"].name: f.record() for f in kept}
                current = {inv.resource_class.name: rules.with_defaults(
                    {field: getattr(inv, field) for field in rules.INVENTORY_FIELDS})
                    for inv in provider.inventories.select_related("resource_class")}
                if wanted != current:
                    inventory_services.inventories_replace(
                        provider=provider, generation=generation, inventories=wanted)
                    generation = provider.generation
            elif formset.model is ProviderTrait:
                wanted = {f.cleaned_data["trait"].name for f in kept}
                current = set(provider.traits.values_list("name", flat=True))
                if wanted != current:
                    provider_trait_services.provider_traits_replace(
                        provider=provider, trait_names=sorted(wanted), generation=generation)
                    generation = provider.generation
            elif formset.model is ProviderAggregate:
                wanted = list(dict.fromkeys(f.cleaned_data["aggregate_uuid"] for f in kept))
                current = set(provider.aggregates.values_list("uuid", flat=True))
                if set(wanted) != current:
                    aggregate_services.aggregates_replace(
                        provider=provider, aggregate_uuids=wanted, generation=generation)
                    generation = provider.generation

    def delete_model(self, request, obj):
        provider_services.provider_delete(uuid=obj.uuid)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # MPTTModelAdmin's tree delete bypasses services
        return actions


# --------------------------------------------------------------------------
# Resource classes and traits: standard names are read-only and undeletable
# --------------------------------------------------------------------------

class CustomNameForm(forms.ModelForm):
    class Meta:
        fields = ["name"]
        help_texts = {"name": CUSTOM_NAME_HELP}

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        validate_custom_name(name)
        return name


class NamedAdmin(ServiceAdminMixin, admin.ModelAdmin):
    """List page shared by resource classes and traits: name, kind, created_at."""

    list_display = ["name", "kind", "created_at"]
    search_fields = ["name"]
    ordering = ["name"]

    @admin.display(description="kind")
    def kind(self, obj):
        return "custom" if obj.is_custom else "standard"


class ResourceClassForm(CustomNameForm):
    class Meta(CustomNameForm.Meta):
        model = ResourceClass


@admin.register(ResourceClass)
class ResourceClassAdmin(NamedAdmin):
    form = ResourceClassForm

    def _is_custom(self, obj):
        return obj is None or not is_standard_resource_class(obj.name)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._is_custom(obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._is_custom(obj)

    def save_model(self, request, obj, form, change):
        if change:
            old_name = form.initial["name"]
            if old_name != obj.name:
                resource_class_services.resource_class_rename(name=old_name, new_name=obj.name)
        else:
            obj.pk = resource_class_services.resource_class_create(name=obj.name).pk
        obj.refresh_from_db()

    def delete_model(self, request, obj):
        resource_class_services.resource_class_delete(name=obj.name)


class TraitForm(CustomNameForm):
    class Meta(CustomNameForm.Meta):
        model = Trait


@admin.register(Trait)
class TraitAdmin(NamedAdmin):
    """Traits are created and deleted, never renamed (as in the API)."""

    form = TraitForm

    def has_change_permission(self, request, obj=None):
        return False if obj is not None else super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        custom = obj is None or not is_standard_trait(obj.name)
        return super().has_delete_permission(request, obj) and custom

    def save_model(self, request, obj, form, change):
        trait, _ = trait_services.trait_ensure(name=obj.name)
        obj.pk = trait.pk
        obj.refresh_from_db()

    def delete_model(self, request, obj):
        trait_services.trait_delete(name=obj.name)

