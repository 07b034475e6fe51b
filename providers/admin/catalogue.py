"""The admin of resource classes and traits (custom names only) and of the change log."""
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.html import format_html

from foundation.admin import QueryStringLookupsMixin
from providers import rules, usage
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


class NamedAdmin(QueryStringLookupsMixin, ServiceAdminMixin, admin.ModelAdmin):
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

    def get_deleted_objects(self, objs, request):
        """A class in use is refused with how many providers and consumers hold it and
        links to them, not Django's list of every protected inventory row (thousands of
        "Inventory: 22@2045" naming no provider). Two queries a class."""
        in_use = [line for obj in objs for line in in_use_lines(obj)]
        if not in_use:
            return super().get_deleted_objects(objs, request)
        return [], {}, set(), in_use


def in_use_lines(resource_class):
    """Why `resource_class` cannot be deleted, as linked lines (empty when unused)."""
    name = resource_class.name
    providers = resource_class.inventories.values("provider_id").distinct().count()
    consumers = usage.consumers_of_class(resource_class)
    lines = []
    if providers:
        lines.append(format_html(
            '{} is in the inventory of {} provider{}: <a href="{}?{}">list them</a>', name,
            f"{providers:,}", pluralize(providers), reverse("ui:bulk"),
            urlencode({"resource_class": name})))
    if consumers:
        lines.append(format_html(
            '{} consumer{} hold {}: <a href="{}?{}">their providers, used and capacity</a>',
            f"{consumers:,}", pluralize(consumers), name, reverse("ui:capacity"),
            urlencode({"rc": name})))
    return lines


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
class ChangeRecordAdmin(QueryStringLookupsMixin, admin.ModelAdmin):
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
