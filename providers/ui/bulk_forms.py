"""Forms of the bulk edit page of the operator UI (/ui/bulk/).

They check the shape of what was posted (a known class, numbers, uuids); the
values themselves are judged by providers.rules in the preview and by the
service when applied, with Placement's messages.
"""
from django import forms

from providers import rules
from providers.models import ResourceClass
from providers.selectors.bulk import BULK_FIELDS


def class_names():
    return list(ResourceClass.objects.order_by("name").values_list("name", flat=True))


class ListField(forms.Field):
    """Every value posted under the field's name (checkboxes, repeated hidden inputs)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value):
        return [item.strip() for item in value or [] if item.strip()]


class BulkFilterForm(forms.Form):
    """Which providers to list: those with inventory of a class, by name."""

    resource_class = forms.CharField(max_length=rules.MAX_NAME_LENGTH)
    name = forms.CharField(required=False, max_length=200, label="Name contains")

    def clean_resource_class(self):
        name = self.cleaned_data["resource_class"].strip()
        if not ResourceClass.objects.filter(name=name).exists():
            raise forms.ValidationError(f"No such resource class {name}.")
        return name


class BulkChangeForm(BulkFilterForm):
    """The change: a new allocation_ratio and/or reserved for one class (blank: kept)."""

    allocation_ratio = forms.FloatField(required=False, min_value=0,
                                        error_messages={"min_value": rules.NEGATIVE_RATIO})
    reserved = forms.IntegerField(required=False)

    def clean(self):
        cleaned = super().clean()
        if not self.changes() and not self.errors:
            raise forms.ValidationError("Give a new allocation ratio, a new reserved amount "
                                        "or both.")
        return cleaned

    def changes(self):
        """{field: new value} of the fields given."""
        data = getattr(self, "cleaned_data", {})
        return {field: data[field] for field in BULK_FIELDS if data.get(field) is not None}


class BulkPreviewForm(BulkChangeForm):
    """The change and the providers ticked on the list."""

    provider = ListField(required=False)

    def clean_provider(self):
        uuids = self.cleaned_data["provider"]
        if not uuids:
            raise forms.ValidationError("Tick at least one provider.")
        return uuids


class BulkApplyForm(BulkChangeForm):
    """The change and each previewed provider with the generation it was previewed at."""

    target = ListField(required=False)

    def clean_target(self):
        targets = []
        for value in self.cleaned_data["target"]:
            uuid, _, generation = value.rpartition(":")
            if not uuid or not generation.isdigit():
                raise forms.ValidationError(f"Not a provider and generation: {value}")
            targets.append((uuid, int(generation)))
        if not targets:
            raise forms.ValidationError("Nothing to apply.")
        return targets
