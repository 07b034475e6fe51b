"""Forms of the bulk edit of traits and aggregates (/ui/bulk/traits-aggregates/).

The providers are chosen as on the inventory bulk edit (a part of the name, an
aggregate, a trait, a tree; ticked or every matching one). The change is traits to add
and remove, or aggregates to join and leave: one kind a batch. Trait names must exist
(the traits page creates them); aggregates are named by uuid, as the API names them.
"""
import re

from django import forms

from console.providers.bulk_forms import ListField, ProviderSelectionForm, ScopeForm, _targets
from console.providers.bulk_reads import matching_hosts, matching_providers
from foundation import uuids
from providers import rules
from providers.models import Trait
from providers.services.membership_bulk import AGGREGATES, TRAITS, MembershipChange

SEPARATORS = re.compile(r"[\s,]+")


def _words(value):
    return list(dict.fromkeys(word for word in SEPARATORS.split(value or "") if word))


class MembershipFilterForm(ProviderSelectionForm):
    """Which providers to list (every filter given applies; none: every provider)."""

    def matching(self, **extra):
        data = self.cleaned_data
        return matching_providers(name_contains=data["name"],
                                  aggregate=data["aggregate"] or None,
                                  trait=data["trait"] or None, root_id=data["tree"], **extra)

    def filtered(self):
        data = self.cleaned_data
        return (data["tree"] is not None or matching_hosts(
            name_contains=data["name"], aggregate=data["aggregate"] or None,
            trait=data["trait"] or None) is not None)

    def filter_params(self):
        return {name: self.data.get(name, "") for name in self.FILTERS if self.data.get(name)}


class MembershipChangeForm(MembershipFilterForm):
    """Traits to add and remove, or aggregates to join and leave (names or uuids
    separated by spaces, commas or lines)."""

    add_traits = forms.CharField(required=False, widget=forms.Textarea, label="Add traits")
    remove_traits = forms.CharField(required=False, widget=forms.Textarea,
                                    label="Remove traits")
    join_aggregates = forms.CharField(required=False, widget=forms.Textarea,
                                      label="Join aggregates (uuids)")
    leave_aggregates = forms.CharField(required=False, widget=forms.Textarea,
                                       label="Leave aggregates (uuids)")

    def _traits(self, field):
        names = _words(self.cleaned_data[field])
        bad = [n for n in names if len(n) > rules.MAX_NAME_LENGTH]
        if bad:
            raise forms.ValidationError(f"Not a trait name: {', '.join(bad)}.")
        known = set(Trait.objects.filter(name__in=names).values_list("name", flat=True))
        missing = [n for n in names if n not in known]
        if missing:
            raise forms.ValidationError(
                f"No such trait {', '.join(missing)} (the traits page creates custom traits).")
        return names

    def clean_add_traits(self):
        return self._traits("add_traits")

    def clean_remove_traits(self):
        return self._traits("remove_traits")

    def _aggregates(self, field):
        values = _words(self.cleaned_data[field])
        bad = [v for v in values if not uuids.is_uuid_like(v)]
        if bad:
            raise forms.ValidationError(
                f"An aggregate is named by its uuid; {', '.join(bad)} is not one.")
        return list(dict.fromkeys(uuids.canonical_uuid_or_none(v) for v in values))

    def clean_join_aggregates(self):
        return self._aggregates("join_aggregates")

    def clean_leave_aggregates(self):
        return self._aggregates("leave_aggregates")

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        traits = cleaned["add_traits"] or cleaned["remove_traits"]
        aggregates = cleaned["join_aggregates"] or cleaned["leave_aggregates"]
        if traits and aggregates:
            raise forms.ValidationError(
                "One batch changes traits or aggregates, not both: change the traits "
                "first, then the aggregates (each batch can be reverted on its own).")
        if not (traits or aggregates):
            raise forms.ValidationError("Give traits to add or remove, or aggregates to "
                                        "join or leave.")
        for add, remove, what in (("add_traits", "remove_traits", "trait"),
                                  ("join_aggregates", "leave_aggregates", "aggregate")):
            both = sorted(set(cleaned[add]) & set(cleaned[remove]))
            if both:
                raise forms.ValidationError(
                    f"Both added and removed: {what} {', '.join(both)}.")
        return cleaned

    def change(self):
        """The MembershipChange the form describes."""
        data = self.cleaned_data
        if data["add_traits"] or data["remove_traits"]:
            return MembershipChange(TRAITS, tuple(data["add_traits"]),
                                    tuple(data["remove_traits"]))
        return MembershipChange(AGGREGATES, tuple(data["join_aggregates"]),
                                tuple(data["leave_aggregates"]))

    def change_params(self):
        """The change as posted (for the apply form's hidden fields)."""
        return {name: self.data.get(name, "") for name in (
            "add_traits", "remove_traits", "join_aggregates", "leave_aggregates")
            if self.data.get(name)}


class MembershipPreviewForm(ScopeForm, MembershipChangeForm):
    """The change, for the providers ticked or every matching one ("all")."""


class MembershipApplyForm(MembershipChangeForm):
    """The change and each previewed provider with the generation it was previewed at."""

    target = ListField(required=False)

    def clean_target(self):
        # the preview posts them in one field, space-separated (3,000 providers are
        # then some 120 KiB of page, not 255)
        targets = _targets([item for value in self.cleaned_data["target"]
                            for item in value.split()])
        if not targets:
            raise forms.ValidationError("Nothing to apply.")
        return targets


def writes_traits(post):
    """Whether a posted change is to traits (else to aggregates): the door's rule."""
    return bool(_words(post.get("add_traits")) or _words(post.get("remove_traits")))
