"""Forms of the provider page of the operator UI (/ui/providers/<uuid>/).

The forms check only the shape of what was typed (a number, a uuid, a
name); the inventory rules (ranges, reserved vs total, min vs max unit ...)
belong to the services, which refuse a bad record with Placement's message.
A form's save() makes exactly one service call with the provider generation
the page was rendered with; the view shows a refusal as a form error and a
generation conflict as a message.
"""
import re

from django import forms
from django.db import transaction

from foundation import uuids
from providers import rules
from providers.models import ResourceClass



def resource_class_names():
    return list(ResourceClass.objects.order_by("name").values_list("name", flat=True))


def _split_names(text):
    """Names separated by whitespace or commas, order kept, duplicates dropped."""
    seen = []
    for name in re.split(r"[\s,]+", text or ""):
        if name and name not in seen:
            seen.append(name)
    return seen


class NameListField(forms.CharField):
    """A text area of names or uuids, one per line (or separated by spaces or commas);
    cleans to a list, order kept, duplicates dropped. Empty is allowed: the empty set."""

    def __init__(self, *, rows, **kwargs):
        super().__init__(required=False, widget=forms.Textarea(attrs={"rows": rows}), **kwargs)

    def to_python(self, value):
        return _split_names(super().to_python(value))


class GenerationField(forms.IntegerField):
    """The provider generation the user saw, posted back for the compare-and-swap."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 0)
        super().__init__(**kwargs)


class ProviderPageForm(forms.Form):
    """One of the provider page's forms: its controls' ids start with `ids` (traits_traits,
    aggregates_generation …), so that no id is on the page twice."""

    ids = ""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", f"{self.ids}_%s")
        super().__init__(*args, **kwargs)


class InventoryFieldsMixin(forms.Form):
    """The inventory fields as numbers; blank means the API's default (rules.INVENTORY_DEFAULTS)."""

    total = forms.IntegerField(required=False)
    reserved = forms.IntegerField(required=False, initial=rules.INVENTORY_DEFAULTS["reserved"])
    min_unit = forms.IntegerField(required=False, initial=rules.INVENTORY_DEFAULTS["min_unit"])
    max_unit = forms.IntegerField(required=False, initial=rules.INVENTORY_DEFAULTS["max_unit"])
    step_size = forms.IntegerField(required=False, initial=rules.INVENTORY_DEFAULTS["step_size"])
    allocation_ratio = forms.FloatField(
        required=False, initial=rules.INVENTORY_DEFAULTS["allocation_ratio"], min_value=0,
        error_messages={"min_value": rules.NEGATIVE_RATIO})

    def record(self):
        """The submitted inventory record, with the API's defaults for blank fields."""
        data = {name: self.cleaned_data.get(name) for name in rules.INVENTORY_FIELDS}
        return rules.with_defaults({k: v for k, v in data.items() if v is not None})


class InventoryForm(InventoryFieldsMixin, ProviderPageForm):
    """Add/update (action=save) or delete (action=delete) one inventory class."""

    ids = "inventory"

    ACTIONS = (("save", "Save"), ("delete", "Delete"))

    resource_class = forms.CharField(max_length=rules.MAX_NAME_LENGTH)
    action = forms.ChoiceField(choices=ACTIONS, initial="save", widget=forms.HiddenInput)
    generation = GenerationField()

    def clean_resource_class(self):
        name = self.cleaned_data["resource_class"].strip()
        if not rules.CLASS_NAME_PATTERN.match(name):
            raise forms.ValidationError(
                "Resource class names are upper-case letters, digits and underscores.")
        return name

    def clean(self):
        cleaned = super().clean()
        # A saved record needs a total (the API's schema requires it); the
        # values themselves are the service's to judge.
        if (cleaned.get("action") == "save" and cleaned.get("total") is None
                and "total" not in self.errors):
            self.add_error("total", "Total is required.")
        return cleaned

    def save(self, provider):
        """One generation-checked replace of the provider's whole inventory set.

        Returns a message for the user; the service raises if it refuses the record.
        """
        from providers.services import inventories as service

        rc = self.cleaned_data["resource_class"]
        current = {inv.resource_class.name: {f: getattr(inv, f) for f in rules.INVENTORY_FIELDS}
                   for inv in provider.inventories.select_related("resource_class")}
        if self.cleaned_data["action"] == "delete":
            if rc not in current:
                return f"{provider.name} has no {rc} inventory; nothing to delete."
            del current[rc]
            verb = "Deleted"
        else:
            verb = "Updated" if rc in current else "Added"
            current[rc] = self.record()
        service.inventories_replace(
            provider=provider, generation=self.cleaned_data["generation"], inventories=current)
        return f"{verb} {rc} inventory of {provider.name}."


class TraitsForm(ProviderPageForm):
    ids = "traits"
    traits = NameListField(
        rows=6, label="Trait names",
        help_text="The provider's complete trait set: one name per line (or "
                  "separated by spaces or commas). Leave empty to remove all traits.")
    create_custom = forms.BooleanField(
        required=False, label=f"Create missing {rules.CUSTOM_PREFIX} traits",
        help_text="Otherwise an unknown trait name is an error.")
    generation = GenerationField()

    def clean_traits(self):
        names = self.cleaned_data["traits"]
        bad = [n for n in names if len(n) > rules.MAX_NAME_LENGTH]
        if bad:
            raise forms.ValidationError(
                f"Trait names are at most {rules.MAX_NAME_LENGTH} characters.")
        return names

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("create_custom"):
            bad = [n for n in cleaned.get("traits") or []
                   if rules.is_custom(n) and not rules.is_valid_custom_name(n)]
            if bad:
                self.add_error("traits", f"Custom trait names are {rules.CUSTOM_NAME_FORM}: "
                                         f"{', '.join(bad)}")
        return cleaned

    def save(self, provider):
        from providers.services import provider_traits as service
        from providers.services.traits import trait_ensure

        names = self.cleaned_data["traits"]
        # One transaction: custom traits created here vanish again if the replace fails.
        with transaction.atomic():
            if self.cleaned_data.get("create_custom"):
                for name in names:
                    if rules.is_custom(name):
                        trait_ensure(name=name)
            service.provider_traits_replace(
                provider=provider, trait_names=names, generation=self.cleaned_data["generation"])
        return f"Saved {len(names)} trait(s) on {provider.name}."


class AggregatesForm(ProviderPageForm):
    ids = "aggregates"
    aggregates = NameListField(
        rows=4, label="Aggregate uuids",
        help_text="The provider's complete aggregate set: one uuid per line. "
                  "Leave empty to remove all aggregates.")
    generation = GenerationField()

    def clean_aggregates(self):
        names = self.cleaned_data["aggregates"]
        # The API's rule; the values are stored as given, as PUT .../aggregates stores them.
        bad = [value for value in names if not uuids.is_uuid_like(value)]
        if bad:
            raise forms.ValidationError(f"Not a uuid: {', '.join(bad)}")
        return names

    def save(self, provider):
        from providers.services import aggregates as service

        names = self.cleaned_data["aggregates"]
        service.aggregates_replace(
            provider=provider, aggregate_uuids=names, generation=self.cleaned_data["generation"])
        return f"Saved {len(names)} aggregate(s) on {provider.name}."
