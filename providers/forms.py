"""Forms of the operator UI (/ui/) and the admin.

Field ranges are the API's (inventories.md); the capacity invariant comes
from providers.rules, the same pure function the services use, so the UI
and the admin refuse what the API refuses before anything is written. A
form's save() makes exactly one service call with the provider generation
the page was rendered with; services raise PlacementError on conflicts,
which the views turn into messages.
"""
import re
import uuid as uuidlib

from django import forms
from django.apps import apps
from django.db import transaction

from providers import rules
from providers.models import ResourceClass

NAME_RE = re.compile(r"^[A-Z0-9_]+$")
MAX_INT = rules.MAX_INT
MAX_RATIO = 3.40282e38
# Microversions at which GET /allocation_candidates exists (1.10+).
CANDIDATE_VERSIONS = [f"1.{minor}" for minor in range(39, 9, -1)]


def resource_class_names():
    return list(ResourceClass.objects.order_by("name").values_list("name", flat=True))


def _split_names(text):
    """Names separated by whitespace or commas, order kept, duplicates dropped."""
    seen = []
    for name in re.split(r"[\s,]+", text or ""):
        if name and name not in seen:
            seen.append(name)
    return seen


class GenerationField(forms.IntegerField):
    """The provider generation the user saw, posted back for the compare-and-swap."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 0)
        super().__init__(**kwargs)


def inventory_record_errors(rc_name, provider_uuid, record):
    """Form errors for one inventory record {total, reserved, ...}: {field: message}."""
    record = rules.with_defaults(record)
    message = rules.inventory_capacity_error(
        rc_name, provider_uuid, record, rules.CAPACITY_NON_NEGATIVE)
    return {"reserved": message} if message else {}


class InventoryFieldsMixin(forms.Form):
    total = forms.IntegerField(min_value=1, max_value=MAX_INT, required=False)
    reserved = forms.IntegerField(min_value=0, max_value=MAX_INT, required=False,
                                  initial=0)
    min_unit = forms.IntegerField(min_value=1, max_value=MAX_INT, required=False, initial=1)
    max_unit = forms.IntegerField(min_value=1, max_value=MAX_INT, required=False,
                                  initial=MAX_INT)
    step_size = forms.IntegerField(min_value=1, max_value=MAX_INT, required=False, initial=1)
    allocation_ratio = forms.FloatField(max_value=MAX_RATIO, required=False, initial=1.0)

    def record(self):
        """The submitted inventory record, with the API's defaults for blank fields."""
        data = {name: self.cleaned_data.get(name) for name in rules.INVENTORY_FIELDS}
        return rules.with_defaults({k: v for k, v in data.items() if v is not None})


class InventoryForm(InventoryFieldsMixin):
    """Add/update (action=save) or delete (action=delete) one inventory class."""

    ACTIONS = (("save", "Save"), ("delete", "Delete"))

    resource_class = forms.CharField(max_length=255)
    action = forms.ChoiceField(choices=ACTIONS, initial="save", widget=forms.HiddenInput)
    generation = GenerationField()

    def __init__(self, *args, provider=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.provider = provider

    def clean_resource_class(self):
        name = self.cleaned_data["resource_class"].strip()
        if not NAME_RE.match(name):
            raise forms.ValidationError(
                "Resource class names are upper-case letters, digits and underscores.")
        return name

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("action") != "save" or self.errors:
            return cleaned
        if cleaned.get("total") is None:
            self.add_error("total", "Total is required.")
            return cleaned
        uuid = self.provider.uuid if self.provider is not None else "?"
        for field, message in inventory_record_errors(
                cleaned["resource_class"], uuid, self.record()).items():
            self.add_error(field, message)
        return cleaned

    def save(self, provider):
        """One generation-checked replace of the provider's whole inventory set.

        Returns a message for the user; raises PlacementError from the service.
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


class TraitsForm(forms.Form):
    traits = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 6}),
        help_text="The provider's complete trait set: one name per line (or separated by "
                  "spaces or commas). Leave empty to remove all traits.")
    create_custom = forms.BooleanField(
        required=False, label="Create missing CUSTOM_ traits",
        help_text="Otherwise an unknown trait name is an error.")
    generation = GenerationField()

    def clean_traits(self):
        names = _split_names(self.cleaned_data["traits"])
        bad = [n for n in names if len(n) > 255]
        if bad:
            raise forms.ValidationError("Trait names are at most 255 characters.")
        return names

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("create_custom"):
            bad = [n for n in cleaned.get("traits") or [] if n.startswith("CUSTOM_")
                   and not NAME_RE.match(n)]
            if bad:
                self.add_error("traits", "Custom trait names are CUSTOM_ followed by upper-case "
                                         f"letters, digits and underscores: {', '.join(bad)}")
        return cleaned

    def save(self, provider):
        from providers.services import provider_traits as service
        from providers.services.traits import trait_ensure

        names = self.cleaned_data["traits"]
        # One transaction: custom traits created here vanish again if the replace fails.
        with transaction.atomic():
            if self.cleaned_data.get("create_custom"):
                for name in names:
                    if name.startswith("CUSTOM_"):
                        trait_ensure(name=name)
            service.provider_traits_replace(
                provider=provider, trait_names=names, generation=self.cleaned_data["generation"])
        return f"Saved {len(names)} trait(s) on {provider.name}."


class AggregatesForm(forms.Form):
    aggregates = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}),
        help_text="The provider's complete aggregate set: one uuid per line. "
                  "Leave empty to remove all aggregates.")
    generation = GenerationField()

    def clean_aggregates(self):
        names = _split_names(self.cleaned_data["aggregates"])
        bad = []
        for value in names:
            try:
                uuidlib.UUID(value)
            except ValueError:
                bad.append(value)
        if bad:
            raise forms.ValidationError(f"Not a uuid: {', '.join(bad)}")
        return names

    def save(self, provider):
        from providers.services import aggregates as service

        names = self.cleaned_data["aggregates"]
        service.aggregates_replace(
            provider=provider, aggregate_uuids=names, generation=self.cleaned_data["generation"])
        return f"Saved {len(names)} aggregate(s) on {provider.name}."


class UsageFilterForm(forms.Form):
    GROUP_BY = (("type", "project, user and consumer type"),
                ("user", "project and user"),
                ("project", "project"))

    project = forms.CharField(required=False, max_length=255)
    user = forms.CharField(required=False, max_length=255)
    consumer_type = forms.CharField(required=False, max_length=255,
                                    help_text='A type name, or "unknown" for consumers '
                                              "without a type.")
    group_by = forms.ChoiceField(choices=GROUP_BY, required=False, initial="type")

    def cleaned_filters(self):
        """Allocation filters for the submitted values ({} for an unbound form)."""
        if not self.is_bound or not self.is_valid():
            return {}
        data = self.cleaned_data
        filters = {}
        if data.get("project"):
            filters["consumer__project__external_id"] = data["project"]
        if data.get("user"):
            filters["consumer__user__external_id"] = data["user"]
        consumer_type = data.get("consumer_type")
        if consumer_type == "unknown":
            filters["consumer__consumer_type__isnull"] = True
        elif consumer_type:
            filters["consumer__consumer_type__name"] = consumer_type
        return filters

    @staticmethod
    def consumer_type_names():
        ConsumerType = apps.get_model("allocations", "ConsumerType")
        return list(ConsumerType.objects.order_by("name").values_list("name", flat=True))


class CandidatesForm(forms.Form):
    q = forms.CharField(
        label="Query string", max_length=4000,
        widget=forms.TextInput(attrs={"size": 100, "class": "mono",
                                      "placeholder": "resources=VCPU:1,MEMORY_MB:512"
                                                     "&required=HW_CPU_X86_AVX2"}))
    version = forms.ChoiceField(label="Microversion", initial=CANDIDATE_VERSIONS[0],
                                choices=[(v, v) for v in CANDIDATE_VERSIONS])

    def clean_q(self):
        """Accept a bare query string, '?query' or a pasted URL/path ending in one."""
        text = self.cleaned_data["q"].strip()
        if "?" in text:
            path, _, text = text.partition("?")
            if path and not path.rstrip("/").endswith("allocation_candidates"):
                raise forms.ValidationError(
                    "Paste only the query string (or a /allocation_candidates URL).")
        text = text.split("#", 1)[0].strip()
        if not text:
            raise forms.ValidationError("Enter a query, e.g. resources=VCPU:1.")
        if any(c.isspace() for c in text):
            raise forms.ValidationError(
                "The query string must not contain spaces (use %20 to send one).")
        return text

    def api_path(self):
        return "/allocation_candidates?" + self.cleaned_data["q"]
