"""The provider admin: the tree, and its inventory, trait and aggregate sets as inlines."""
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import AutocompleteSelect
from mptt.admin import MPTTModelAdmin
from mptt.forms import MPTTAdminForm

from foundation import uuids
from foundation.admin import QueryStringLookupsMixin
from foundation.forms import GenerationField
from providers import rules
from providers.admin.forms import (
    NoRelatedLinksMixin, ServiceAdminMixin, ServiceInlineFormSet, ServiceModelForm,
)
from providers.models import Inventory, ProviderAggregate, ProviderTrait, ResourceProvider
from providers.usage import inventories_below_usage
from providers.services import aggregates as aggregate_services
from providers.services import inventories as inventory_services
from providers.services import provider_traits as provider_trait_services
from providers.services import providers as provider_services


class InventoryInlineForm(forms.ModelForm):
    """One inventory row; its rules are Inventory.clean()'s and the service's."""

    class Meta:
        model = Inventory
        fields = ["resource_class", *rules.INVENTORY_FIELDS]

    def record(self):
        return rules.with_defaults({f: self.cleaned_data[f] for f in rules.INVENTORY_FIELDS})


class ProviderSetInline(admin.TabularInline):
    """One of the provider's sets (inventories, traits, aggregates): rows the provider
    form hands to the set's service, one empty row to add to, `related` joined."""

    formset = ServiceInlineFormSet
    extra = 1
    related = ()

    def get_queryset(self, request):
        return super().get_queryset(request).select_related(*self.related)


def _inner_widget(field):
    """The widget of a foreign-key form field, inside the admin's RelatedFieldWidgetWrapper."""
    return getattr(field.widget, "widget", field.widget)


class InventoryFormSet(ServiceInlineFormSet):
    """The inventory rows' resource class selects share one list of classes: one
    query for the page, not one per row."""

    _class_choices = None

    def add_fields(self, form, index):
        super().add_fields(form, index)
        field = form.fields["resource_class"]
        if self._class_choices is None:
            self._class_choices = list(iter(field.choices))   # (list() would count first)
        field.choices = _inner_widget(field).choices = self._class_choices


class InventoryInline(NoRelatedLinksMixin, ProviderSetInline):
    model = Inventory
    form = InventoryInlineForm
    formset = InventoryFormSet
    verbose_name_plural = "inventories"
    fields = ["resource_class", *rules.INVENTORY_FIELDS]
    related = ("resource_class", "provider")


class StoredAutocompleteSelect(AutocompleteSelect):
    """The admin's autocomplete select, which renders the option of the row's stored
    object (`stored`: (pk, label), set by the form) without a query; Django's asks
    the database for the selected option, one query per row (a host has dozens of
    traits). Any other value is looked up as Django does."""

    stored = None

    def optgroups(self, name, value, attr=None):
        # a value that is no primary key (a typed uuid, "abc") selects nothing: the
        # form says what is wrong with it
        value = [v for v in value if str(v).isdigit()]
        if self.stored is None or [str(v) for v in value] != [str(self.stored[0])]:
            return super().optgroups(name, value, attr)
        pk, label = self.stored
        return [(None, [self.create_option(name, pk, label, True, 0)], 0)]


class ProviderTraitForm(forms.ModelForm):
    class Meta:
        model = ProviderTrait
        fields = ["trait"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["trait"]
        widget = _inner_widget(field)
        if self.instance.pk and isinstance(widget, StoredAutocompleteSelect):
            # the inline's queryset joined the trait (ProviderSetInline.related)
            widget.stored = (self.instance.trait_id,
                             field.label_from_instance(self.instance.trait))


class ProviderTraitInline(NoRelatedLinksMixin, ProviderSetInline):
    model = ProviderTrait
    form = ProviderTraitForm
    fields = ["trait"]
    autocomplete_fields = ["trait"]
    verbose_name = "trait"
    verbose_name_plural = "traits"
    related = ("trait",)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "trait":
            kwargs["widget"] = StoredAutocompleteSelect(db_field, self.admin_site,
                                                        using=kwargs.get("using"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


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
        # The API's rule; the value is stored as given, as PUT .../aggregates stores it.
        if not uuids.is_uuid_like(value):
            raise forms.ValidationError("Enter a uuid.")
        return value


class ProviderAggregateInline(ProviderSetInline):
    model = ProviderAggregate
    form = ProviderAggregateForm
    fields = ["aggregate_uuid"]
    verbose_name = "aggregate"
    verbose_name_plural = "aggregates"
    related = ("aggregate",)


def _wanted_inventories(formset):
    """{class name: record} the inventory inline describes."""
    return {form.cleaned_data["resource_class"].name: form.record()
            for form in formset.kept_forms()}


def _current_inventories(provider):
    return {inv.resource_class.name: rules.with_defaults(
        {field: getattr(inv, field) for field in rules.INVENTORY_FIELDS})
        for inv in provider.inventories.select_related("resource_class")}


def provider_named(value):
    """The provider a uuid (any uuid-like form) or a primary key names, or None."""
    canonical = uuids.canonical_uuid_or_none(value)
    if canonical is not None:
        return ResourceProvider.objects.filter(uuid=canonical).first()
    if value.isdigit():
        return ResourceProvider.objects.filter(pk=int(value)).first()
    return None


class ResourceProviderForm(ServiceModelForm, MPTTAdminForm):
    expected_generation = GenerationField(required=False)
    # Hidden until a change needs it (check_before_save), as the operator page's
    # below-usage confirmation appears only then.
    confirm_below_usage = forms.BooleanField(
        required=False, widget=forms.HiddenInput, label="Save below usage",
        help_text="Save although the new capacity is below what is allocated: the provider "
                  "is then over capacity and takes no new allocations of that class until "
                  "usage falls. Existing allocations stay.")

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

        self.parent_problem = self._read_parent() if self.is_bound else None

    def _read_parent(self):
        """The posted parent as the autocomplete's primary key, also when it names the
        provider by uuid; what is wrong with it (no such provider, a cycle), or None."""
        raw = (self.data.get("parent") or "").strip()
        if not raw:
            return None
        found = provider_named(raw)
        self.data = self.data.copy()
        self.data["parent"] = "" if found is None else str(found.pk)
        if found is None:
            return f"No resource provider {raw!r}: name the parent by its uuid."
        if self.instance.pk and found.root_id == self.instance.root_id and (
                found.pk == self.instance.pk
                or found.is_descendant_of(self.instance)):
            self.data["parent"] = ""
            where = ("the provider itself" if found.pk == self.instance.pk
                     else f"below {self.instance.name} in its tree")
            return f"{found.name} is {where}: as its parent it would make a cycle."
        return None

    def clean(self):
        cleaned = super().clean()
        if self.parent_problem:
            self.add_error("parent", self.parent_problem)
        return cleaned

    def refusal_message(self, exc):
        message = super().refusal_message(exc)
        if self.instance.pk:  # the stored name: a typed rename was rolled back
            stored = ResourceProvider.objects.filter(pk=self.instance.pk).values_list(
                "uuid", "name").first()
            if stored:
                message = message.replace(*stored)
        return message

    def check_before_save(self):
        """An inventory change that leaves a class below its usage is saved only once
        `confirm_below_usage` is ticked (the operator page asks the same)."""
        if self.instance.pk is None or self.cleaned_data.get("confirm_below_usage"):
            return
        for formset in self.inline_formsets():
            if formset.model is not Inventory:
                continue
            current = _current_inventories(self.instance)
            changed = {rc: record for rc, record in _wanted_inventories(formset).items()
                       if current.get(rc) != record}
            below = inventories_below_usage(self.instance, changed)
            if below:
                self.fields["confirm_below_usage"].widget = forms.CheckboxInput()
                for item in below:
                    consumers = ", ".join(f"{consumer} ({used})"
                                          for consumer, used in item.holders)
                    self.add_error("confirm_below_usage", (
                        f"{item.resource_class}: the new capacity {item.capacity} is below the "
                        f"{item.used} already allocated, by {len(item.holders)} consumer"
                        f"{'s' if len(item.holders) != 1 else ''}: {consumers}. "
                        f"{self.instance.name} would take no new {item.resource_class} "
                        "allocations until usage falls. Tick \"Save below usage\" to save anyway."))

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

    def save(self, commit=True):
        """Create or update the provider, then replace each changed inline set.

        Each set is written by its service with the running provider generation,
        starting from the one the page was rendered with (expected_generation).
        """
        data = self.cleaned_data
        parent = data.get("parent")
        parent_uuid = parent.uuid if parent is not None else None
        if self.instance.pk is None:
            provider = provider_services.provider_create(
                name=data["name"], uuid=data.get("uuid") or None, parent_uuid=parent_uuid)
            generation = provider.generation
        else:
            provider, _ = provider_services.provider_update(
                uuid=self.instance.uuid, name=data["name"],
                parent_uuid=parent_uuid if "parent" in self.changed_data
                else provider_services.UNCHANGED)
            generation = data.get("expected_generation")
            if generation is None:
                generation = provider.generation
        for formset in self.inline_formsets():
            kept = formset.kept_forms()
            if formset.model is Inventory:
                wanted = _wanted_inventories(formset)
                if wanted != _current_inventories(provider):
                    inventory_services.inventories_replace(
                        provider=provider, generation=generation, inventories=wanted)
                    generation = provider.generation
            elif formset.model is ProviderTrait:
                wanted = {f.cleaned_data["trait"].name for f in kept}
                if wanted != set(provider.traits.values_list("name", flat=True)):
                    provider_trait_services.provider_traits_replace(
                        provider=provider, trait_names=sorted(wanted), generation=generation)
                    generation = provider.generation
            elif formset.model is ProviderAggregate:
                wanted = list(dict.fromkeys(f.cleaned_data["aggregate_uuid"] for f in kept))
                if set(wanted) != set(provider.aggregates.values_list("uuid", flat=True)):
                    aggregate_services.aggregates_replace(
                        provider=provider, aggregate_uuids=wanted, generation=generation)
                    generation = provider.generation
        provider.refresh_from_db()
        return provider


@admin.register(ResourceProvider)
class ResourceProviderAdmin(QueryStringLookupsMixin, NoRelatedLinksMixin, ServiceAdminMixin, MPTTModelAdmin):
    form = ResourceProviderForm
    list_display = ["name", "uuid", "generation", "root_name", "created_at"]
    search_fields = ["name", "uuid"]  # also what the parent autocomplete searches
    autocomplete_fields = ["parent"]  # not a select of every provider in the cloud
    list_select_related = ["root"]
    list_per_page = 100
    mptt_level_indent = 20
    inlines = [InventoryInline, ProviderTraitInline, ProviderAggregateInline]
    readonly_fields = ["generation", "root", "created_at", "updated_at", "ui_link"]

    class Media:
        css = {"all": ["ui/admin.css"]}

    def get_changeform_initial_data(self, request):
        """?parent= takes a provider's uuid (or its primary key); another value is
        said, not a 500."""
        initial = super().get_changeform_initial_data(request)
        if initial.get("parent"):
            found = provider_named(str(initial["parent"]))
            if found is None:
                messages.error(request, f"No resource provider {initial.pop('parent')!r} "
                                        "to add under: choose the parent below.")
            else:
                initial["parent"] = str(found.pk)
        return initial

    def get_fields(self, request, obj=None):
        fields = ["name", "uuid", "parent", "expected_generation"]
        if obj is not None:
            fields += ["confirm_below_usage", "generation", "root", "created_at", "updated_at", "ui_link"]
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

    def delete_model(self, request, obj):
        provider_services.provider_delete(uuid=obj.uuid)


# --------------------------------------------------------------------------
# Resource classes and traits: standard names are read-only and undeletable
# --------------------------------------------------------------------------
