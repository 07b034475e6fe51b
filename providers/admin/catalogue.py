"""The admin of resource classes and traits (custom names only) and of the change log."""
from django import forms
from django.contrib import admin

from providers import rules
from providers.admin.forms import ServiceAdminMixin, ServiceModelForm
from providers.models import ChangeRecord, ResourceClass, Trait
from providers.services import resource_classes as resource_class_services
from providers.services import traits as trait_services
from providers.standard import is_standard_resource_class, is_standard_trait

CUSTOM_NAME_HELP = rules.CUSTOM_NAME_HELP


def validate_custom_name(value):
    if not rules.is_valid_custom_name(value):
        raise forms.ValidationError(f"Invalid name {value!r}: use {CUSTOM_NAME_HELP}")


class CustomNameForm(ServiceModelForm):
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

    def save(self, commit=True):
        name = self.cleaned_data["name"]
        if self.instance.pk is None:
            return resource_class_services.resource_class_create(name=name)
        old_name = self.initial["name"]
        if old_name != name:
            resource_class_services.resource_class_rename(name=old_name, new_name=name)
        return ResourceClass.objects.get(pk=self.instance.pk)


@admin.register(ResourceClass)
class ResourceClassAdmin(NamedAdmin):
    form = ResourceClassForm

    def _is_custom(self, obj):
        return obj is None or not is_standard_resource_class(obj.name)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._is_custom(obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._is_custom(obj)

    def delete_model(self, request, obj):
        resource_class_services.resource_class_delete(name=obj.name)


class TraitForm(CustomNameForm):
    class Meta(CustomNameForm.Meta):
        model = Trait

    def save(self, commit=True):
        trait, _ = trait_services.trait_ensure(name=self.cleaned_data["name"])
        return trait


@admin.register(Trait)
class TraitAdmin(NamedAdmin):
    """Traits are created and deleted, never renamed (as in the API)."""

    form = TraitForm

    def has_change_permission(self, request, obj=None):
        return False if obj is not None else super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        custom = obj is None or not is_standard_trait(obj.name)
        return super().has_delete_permission(request, obj) and custom

    def delete_model(self, request, obj):
        trait_services.trait_delete(name=obj.name)


# --------------------------------------------------------------------------
# The change log: read-only (written by the services, pruned by retention)
# --------------------------------------------------------------------------

@admin.register(ChangeRecord)
class ChangeRecordAdmin(admin.ModelAdmin):
    list_display = ["created_at", "kind", "entity", "action", "actor", "project_id",
                    "request_id"]
    # "today / past 7 days / this month" rather than a date_hierarchy, whose year and
    # month links read every entry's date (in Python, per row, on SQLite: 400 ms at
    # 100,000 entries, 90 days of a 3,000-instance cloud)
    list_filter = ["kind", "action", "created_at"]
    search_fields = ["entity", "actor", "project_id", "request_id"]
    ordering = ["-created_at", "-id"]
    list_per_page = 100

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
