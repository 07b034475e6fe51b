"""Forms of the bulk edit page of the operator UI (/ui/bulk/).

They check the shape of what was posted (a known class, numbers, uuids); the
values themselves are judged by providers.rules in the preview and by the
service when applied, with Placement's messages.
"""
from django import forms

from console.providers.forms import allocation_ratio_field, field_range_errors
from foundation import uuids
from providers import rules
from providers.models import ResourceClass, Trait
from console.providers.bulk_reads import (
    BULK_FIELDS,
    bulk_matching,
    matching_hosts,
    tree_root_id,
)


def class_names():
    return list(ResourceClass.objects.order_by("name").values_list("name", flat=True))


class ListField(forms.Field):
    """Every value posted under the field's name (checkboxes, repeated hidden inputs)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value):
        return [item.strip() for item in value or [] if item.strip()]


class ProviderSelectionForm(forms.Form):
    """The filters both bulk edits choose providers by: a part of their name, an
    aggregate, a trait, a tree (every filter given applies)."""

    FILTERS = ("name", "aggregate", "trait", "tree")

    name = forms.CharField(required=False, max_length=200, label="Name contains")
    aggregate = forms.CharField(required=False, max_length=36, label="In aggregate (uuid)")
    trait = forms.CharField(required=False, max_length=rules.MAX_NAME_LENGTH, label="With trait")
    tree = forms.CharField(required=False, max_length=200,
                           label="In the tree of (provider name or uuid)")

    def clean_aggregate(self):
        value = self.cleaned_data["aggregate"].strip()
        if value and not uuids.is_uuid_like(value):
            raise forms.ValidationError(f"An aggregate is named by its uuid; “{value}” is not one.")
        return uuids.canonical_uuid_or_none(value) if value else ""

    def clean_trait(self):
        value = self.cleaned_data["trait"].strip()
        if value and not Trait.objects.filter(name=value).exists():
            raise forms.ValidationError(f"No such trait {value}.")
        return value

    def clean_tree(self):
        value = self.cleaned_data["tree"].strip()
        if not value:
            return None
        root_id = tree_root_id(value)
        if root_id is None:
            raise forms.ValidationError(f"No provider is named or has the uuid “{value}”.")
        return root_id


class BulkFilterForm(ProviderSelectionForm):
    """Which providers to list: those with inventory of a class, chosen by the filters."""

    resource_class = forms.CharField(max_length=rules.MAX_NAME_LENGTH)
    field_order = ["resource_class", *ProviderSelectionForm.FILTERS]

    def clean_resource_class(self):
        name = self.cleaned_data["resource_class"].strip()
        if not ResourceClass.objects.filter(name=name).exists():
            raise forms.ValidationError(f"No such resource class {name}.")
        return name

    def matching(self, **extra):
        """The inventories the filters select (console.providers.bulk_reads.bulk_matching)."""
        data = self.cleaned_data
        return bulk_matching(resource_class=data["resource_class"], name_contains=data["name"],
                             aggregate=data["aggregate"] or None, trait=data["trait"] or None,
                             root_id=data["tree"], **extra)

    def hosts(self):
        """The providers the host filters select, or None (bulk_reads.matching_hosts)."""
        data = self.cleaned_data
        return matching_hosts(name_contains=data["name"], aggregate=data["aggregate"] or None,
                              trait=data["trait"] or None)

    def filter_params(self):
        """The filters as typed (for the links back to the list)."""
        return {name: self.data.get(name, "") for name in ("resource_class", *self.FILTERS)
                if self.data.get(name)}


class BulkChangeForm(BulkFilterForm):
    """The change: a new allocation_ratio and/or reserved for one class (blank: kept)."""

    allocation_ratio = allocation_ratio_field()
    reserved = forms.IntegerField(required=False)

    def clean(self):
        cleaned = super().clean()
        # the provider page's rules and words: a value no provider could take is the
        # form's error, not a preview of every provider refusing it
        field_range_errors(self, BULK_FIELDS)
        if not self.changes() and not self.errors:
            raise forms.ValidationError("Give a new allocation ratio, a new reserved amount "
                                        "or both.")
        return cleaned

    def changes(self):
        """{field: new value} of the fields given."""
        data = getattr(self, "cleaned_data", {})
        return {field: data[field] for field in BULK_FIELDS if data.get(field) is not None}


class ScopeForm(forms.Form):
    """Which of the matching providers a bulk change is for: those ticked on the list's
    page, or every provider the filters match ("all", across pages). With a form that
    has matching()."""

    SCOPES = (("ticked", "the providers ticked"), ("all", "every matching provider"))

    provider = ListField(required=False)
    scope = forms.ChoiceField(choices=SCOPES, required=False)

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("scope") != "all" and not cleaned.get("provider"):
            self.add_error("provider", "Tick at least one provider, or choose every "
                                       "matching provider.")
        return cleaned

    def chosen(self):
        """What the change is previewed on (matching(), narrowed to the ticked ones)."""
        if self.cleaned_data.get("scope") == "all":
            return self.matching()
        return self.matching(provider_uuids=self.cleaned_data["provider"])


class BulkPreviewForm(ScopeForm, BulkChangeForm):
    """The inventory change, and the providers it is for."""


def _targets(values):
    targets = []
    for value in values:
        uuid, _, generation = value.rpartition(":")
        if not uuid or not generation.isdigit():
            raise forms.ValidationError(f"Not a provider and generation: {value}")
        targets.append((uuid, int(generation)))
    return targets


class BulkApplyForm(BulkChangeForm):
    """The change and each previewed provider with the generation it was previewed at;
    `over`: those of them the preview said would go over capacity. They are written
    only when `over_ok` is ticked; `within_only` leaves them out."""

    target = ListField(required=False)
    over = ListField(required=False)
    within_only = forms.BooleanField(required=False)
    over_ok = forms.BooleanField(required=False)

    def clean_target(self):
        targets = _targets(self.cleaned_data["target"])
        if not targets:
            raise forms.ValidationError("Nothing to apply.")
        return targets

    def clean_over(self):
        return _targets(self.cleaned_data["over"])

    def clean(self):
        cleaned = super().clean()
        over = set(cleaned.get("over") or [])
        if over and not cleaned.get("within_only") and not cleaned.get("over_ok"):
            raise forms.ValidationError(
                f"{len(over)} provider(s) would go over capacity: apply only where the "
                "change stays within capacity, or tick that you accept it.")
        if cleaned.get("within_only") and "target" in cleaned:
            cleaned["target"] = [t for t in cleaned["target"] if t not in over]
            if not cleaned["target"]:
                raise forms.ValidationError("Every provider would go over capacity: "
                                            "nothing to apply.")
        return cleaned
