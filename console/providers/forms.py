"""Forms of the provider page of the operator UI (/ui/providers/<uuid>/).

The forms check only the shape of what was typed (a number, a uuid, a
name); the inventory rules (ranges, reserved vs total, min vs max unit ...)
belong to the services, which refuse a bad record with Placement's message.
A form's save() makes exactly one service call with the provider generation
the page was rendered with; the view shows a refusal as a form error and a
generation conflict as a message.
"""
import re
from dataclasses import dataclass

from django import forms
from django.db import transaction

from foundation.forms import GenerationField
from foundation import uuids
from console.numbers import number
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


class ProviderPageForm(forms.Form):
    """One of the provider page's forms: its controls' ids start with `ids` (traits_traits,
    aggregates_generation …), so that no id is on the page twice."""

    ids = ""

    def __init__(self, *args, provider=None, **kwargs):
        kwargs.setdefault("auto_id", f"{self.ids}_%s")
        self.provider = provider    # the provider the page is about, when bound to a post
        super().__init__(*args, **kwargs)


class InventoryFieldsMixin(forms.Form):
    """The inventory fields as numbers. A blank field keeps the class's current value
    (an update) or takes the API's default (a new class, rules.INVENTORY_DEFAULTS): the
    form is rendered blank, never with the defaults as values, so that an update of one
    field cannot reset the others to the defaults."""

    total = forms.IntegerField(required=False)
    reserved = forms.IntegerField(required=False)
    min_unit = forms.IntegerField(required=False)
    max_unit = forms.IntegerField(required=False)
    step_size = forms.IntegerField(required=False)
    # A text box: a browser empties a number box holding 1e400 before posting it, so the
    # form would never see (and refuse) it.
    allocation_ratio = forms.FloatField(
        required=False, min_value=0, widget=forms.TextInput(attrs={"inputmode": "decimal"}),
        error_messages={"min_value": rules.NEGATIVE_RATIO,
                        "invalid": "Enter a finite number for the allocation ratio, "
                                   f"at most {rules.MAX_ALLOCATION_RATIO}."})

    def record(self, current=None):
        """The submitted inventory record: blank fields keep `current` (the class's
        record now, if it has one), or take the API's defaults."""
        record = dict(current or {})
        record.update({name: self.cleaned_data.get(name) for name in rules.INVENTORY_FIELDS
                       if self.cleaned_data.get(name) is not None})
        return rules.with_defaults(record)


class InventoryForm(InventoryFieldsMixin, ProviderPageForm):
    """Add/update (action=save) or delete (action=delete) one inventory class."""

    ids = "inventory"

    ACTIONS = (("save", "Save"), ("delete", "Delete"))

    resource_class = forms.CharField(max_length=rules.MAX_NAME_LENGTH)
    action = forms.ChoiceField(choices=ACTIONS, initial="save", widget=forms.HiddenInput)
    generation = GenerationField()
    create_custom = forms.BooleanField(
        required=False, label=f"Create the {rules.CUSTOM_PREFIX} class if it is new",
        help_text="Otherwise an unknown class name is an error.")

    def clean_resource_class(self):
        name = self.cleaned_data["resource_class"].strip()
        if not rules.CLASS_NAME_PATTERN.match(name):
            raise forms.ValidationError(
                "Resource class names are upper-case letters, digits and underscores.")
        return name

    def clean(self):
        cleaned = super().clean()
        # A new class needs a total (the API's schema requires it); an update keeps
        # the current one. The values themselves are the service's to judge.
        if (cleaned.get("action") == "save" and cleaned.get("total") is None
                and "total" not in self.errors and not self._class_exists(cleaned)):
            self.add_error("total", "Total is required for a new class.")
        name = cleaned.get("resource_class")
        if (cleaned.get("create_custom") and name and rules.is_custom(name)
                and not rules.is_valid_custom_name(name)):
            self.add_error("resource_class",
                           f"Custom resource class names are {rules.CUSTOM_NAME_FORM}.")
        return cleaned

    def _class_exists(self, cleaned):
        return (self.provider is not None and cleaned.get("resource_class") is not None
                and self.provider.inventories.filter(
                    resource_class__name=cleaned["resource_class"]).exists())

    def change(self, provider):
        """The InventoryChange this saved form makes to `provider`'s current inventory."""
        return InventoryChange.of(provider, self.cleaned_data["resource_class"], self)

    def save(self, provider):
        """One generation-checked replace of the provider's whole inventory set.

        Returns a message for the user (an update lists each changed field, before ->
        after); the service raises if it refuses the record.
        """
        from providers.services import inventories as service

        rc = self.cleaned_data["resource_class"]
        current = current_inventories(provider)
        if self.cleaned_data["action"] == "delete":
            if rc not in current:
                return f"{provider.name} has no {rc} inventory; nothing to delete."
            del current[rc]
            message = f"Deleted {rc} inventory of {provider.name}."
        else:
            change = InventoryChange(rc, current.get(rc), self.record(current.get(rc)))
            current[rc] = change.after
            message = change.message(provider.name)
        # One transaction: a class created here vanishes again if the replace fails.
        with transaction.atomic():
            if (self.cleaned_data.get("create_custom") and rules.is_custom(rc)
                    and self.cleaned_data["action"] == "save"):
                from providers.services.resource_classes import resource_class_ensure

                resource_class_ensure(name=rc)
            service.inventories_replace(
                provider=provider, generation=self.cleaned_data["generation"],
                inventories=current)
        return message


def current_inventories(provider):
    """{class name: record} of `provider`'s inventories now (one query)."""
    return {inv.resource_class.name: {f: getattr(inv, f) for f in rules.INVENTORY_FIELDS}
            for inv in provider.inventories.select_related("resource_class")}


@dataclass(frozen=True)
class InventoryChange:
    """One class's inventory record before (None: a new class) and after a save."""

    rc: str
    before: dict | None
    after: dict

    @classmethod
    def of(cls, provider, rc, form):
        before = current_inventories(provider).get(rc)
        return cls(rc, before, form.record(before))

    @property
    def fields(self):
        """[(field, before, after)] of each field the save changes (an update only)."""
        if self.before is None:
            return []
        return [(name, self.before[name], self.after[name]) for name in rules.INVENTORY_FIELDS
                if self.before[name] != self.after[name]]

    @staticmethod
    def _capacity(record, formula=rules.reported_capacity):
        return formula(record["total"], record["reserved"], record["allocation_ratio"])

    @property
    def capacity_before(self):
        """Whole units (as the page shows capacity); None for a new class."""
        return None if self.before is None else self._capacity(self.before)

    @property
    def capacity_after(self):
        return self._capacity(self.after)

    @property
    def capacity_drops(self):
        """An update leaving less capacity than now: confirmed before it is saved."""
        return (self.before is not None and self._capacity(self.after, rules.capacity)
                < self._capacity(self.before, rules.capacity))

    def message(self, provider_name):
        if self.before is None:
            return f"Added {self.rc} inventory of {provider_name}."
        if not self.fields:
            return f"{self.rc} inventory of {provider_name} unchanged."
        changed = ", ".join(f"{name} {number(old)} → {number(new)}"
                            for name, old, new in self.fields)
        return f"Updated {self.rc} inventory of {provider_name}: {changed}."


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

    def difference(self, provider):
        """([added], [removed]) trait names against the provider's traits now."""
        now = set(provider.traits.values_list("name", flat=True))
        wanted = set(self.cleaned_data["traits"])
        return sorted(wanted - now), sorted(now - wanted)

    def save(self, provider):
        from providers.services import provider_traits as service
        from providers.services.traits import trait_ensure

        names = self.cleaned_data["traits"]
        added, removed = self.difference(provider)
        # One transaction: custom traits created here vanish again if the replace fails.
        with transaction.atomic():
            if self.cleaned_data.get("create_custom"):
                for name in names:
                    if rules.is_custom(name):
                        trait_ensure(name=name)
            service.provider_traits_replace(
                provider=provider, trait_names=names, generation=self.cleaned_data["generation"])
        if not added and not removed:
            return f"Traits of {provider.name} unchanged."
        changes = [f"{label} {', '.join(traits)}" for label, traits
                   in (("added", added), ("removed", removed)) if traits]
        return f"Traits of {provider.name}: {'; '.join(changes)}."


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
