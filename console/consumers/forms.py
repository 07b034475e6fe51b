"""Forms of the allocation pages of the operator UI (/ui/usages/)."""
from django import forms

from allocations import selectors
from allocations.models import UNKNOWN_CONSUMER_TYPE
from providers.rules import MAX_INT, MAX_NAME_LENGTH


class UsageFilterForm(forms.Form):
    GROUP_BY = (("type", "project, user and consumer type"),
                ("user", "project and user"),
                ("project", "project"))

    project = forms.CharField(required=False, max_length=255)
    user = forms.CharField(required=False, max_length=255)
    consumer_type = forms.CharField(required=False, max_length=MAX_NAME_LENGTH,
                                    help_text=f'A type name, or "{UNKNOWN_CONSUMER_TYPE}" for '
                                              "consumers without a type.")
    group_by = forms.ChoiceField(choices=GROUP_BY, required=False, initial="type")
    # "consumers" or a resource class name, "-" first for smallest first (the table's
    # header links set it; an unknown column leaves the rows by group)
    sort = forms.CharField(required=False, max_length=MAX_NAME_LENGTH + 1,
                           widget=forms.HiddenInput)

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
        if consumer_type == UNKNOWN_CONSUMER_TYPE:
            filters["consumer__consumer_type__isnull"] = True
        elif consumer_type:
            filters["consumer__consumer_type__name"] = consumer_type
        return filters

    @staticmethod
    def consumer_type_names():
        return selectors.consumer_type_names()


class ConsumerFilterForm(UsageFilterForm):
    """The consumers list (/ui/consumers/): the usages filters, a uuid search and a host
    (the consumers holding anything in the tree of the provider so named, or with that
    uuid)."""

    q = forms.CharField(required=False, max_length=36, label="UUID contains")
    host = forms.CharField(required=False, max_length=200, label="On host (name or uuid)")
    group_by = None
    sort = None

    def clean_host(self):
        value = self.cleaned_data["host"].strip()
        if not value:
            return None
        root_id = selectors.tree_root_id(value)
        if root_id is None:
            raise forms.ValidationError(f"No resource provider is named or has the uuid "
                                        f"“{value}”.")
        return root_id


class MoveAllocationForm(forms.Form):
    """Move one allocation (a class on a provider) of the consumer page to another provider.

    Carries the generations the page was rendered with: the consumer's, the
    source provider's, and the chosen target's (each target option's value is
    "<uuid>:<generation>"), so the service can refuse a move based on a stale page.
    """

    source = forms.CharField(max_length=36, widget=forms.HiddenInput)
    source_generation = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    resource_class = forms.CharField(max_length=MAX_NAME_LENGTH, widget=forms.HiddenInput)
    consumer_generation = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    target = forms.CharField(max_length=60, error_messages={
        "required": "Choose the provider to move the allocation to."})
    unrelated_ok = forms.BooleanField(required=False, label="move to another tree")

    def clean_target(self):
        rp_uuid, _, generation = self.cleaned_data["target"].rpartition(":")
        if not rp_uuid or not generation.isdigit():
            raise forms.ValidationError("Choose the provider to move the allocation to.")
        return rp_uuid, int(generation)


class MoveTargetSearchForm(forms.Form):
    """The move picker's query: the allocation (provider uuid or name, and class) and a
    search."""

    provider = forms.CharField(max_length=200, widget=forms.HiddenInput)
    resource_class = forms.CharField(max_length=MAX_NAME_LENGTH, widget=forms.HiddenInput)
    q = forms.CharField(required=False, max_length=200, label="Provider name contains")
    same = forms.BooleanField(required=False, label="Only hosts with every trait and "
                                                   "aggregate the source host has")


class RemoveAllocationForm(forms.Form):
    """Remove one allocation (a class on a provider), checked against the consumer's and
    the provider's generations the page was rendered with; confirm: the second step."""

    provider = forms.CharField(max_length=36, widget=forms.HiddenInput)
    provider_generation = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    resource_class = forms.CharField(max_length=MAX_NAME_LENGTH, widget=forms.HiddenInput)
    consumer_generation = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)


class RemoveAllocationsForm(forms.Form):
    """Remove all of a consumer's allocations, checked against the page's generation."""

    consumer_generation = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)


class MoveTreeSearchForm(forms.Form):
    """The whole-host move picker: the source host (the name or uuid of its root, or of
    any provider of its tree; cleaned to the root) and a name search."""

    root = forms.CharField(max_length=200, widget=forms.HiddenInput, error_messages={
        "required": "Choose the host to move everything off."})
    q = forms.CharField(required=False, max_length=200, label="Host name contains")
    same = forms.BooleanField(required=False, label="Only hosts with every trait and "
                                                   "aggregate the source host has")

    def clean_root(self):
        given = self.cleaned_data["root"].strip()
        root = selectors.tree_root(given)
        if root is None:
            raise forms.ValidationError(f"No resource provider is named or has the uuid "
                                        f"“{given}”.")
        return root


class MoveTreeForm(forms.Form):
    """Move everything the consumer holds on one host to another, checked against the
    generations the page showed: the consumer's and each provider's of both trees
    ("<uuid>:<generation>" separated by spaces)."""

    source_root = forms.CharField(max_length=36, widget=forms.HiddenInput)
    target_root = forms.CharField(max_length=36, widget=forms.HiddenInput)
    consumer_generation = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    generations = forms.CharField(required=False, max_length=100_000, widget=forms.HiddenInput)

    def clean_generations(self):
        generations = {}
        for item in self.cleaned_data["generations"].split():
            rp_uuid, _, generation = item.rpartition(":")
            if not rp_uuid or not generation.isdigit():
                raise forms.ValidationError("The page's provider generations are garbled; "
                                            "reload the page.")
            generations[rp_uuid] = int(generation)
        return generations


class AddAllocationForm(forms.Form):
    """Add an allocation to the consumer: a class and amount on a provider named by name
    or uuid, checked against the consumer generation the page showed."""

    consumer_generation = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    provider = forms.CharField(max_length=200, label="Provider (name or uuid)")
    resource_class = forms.CharField(max_length=MAX_NAME_LENGTH, label="Class")
    amount = forms.IntegerField(min_value=1, max_value=MAX_INT, label="Amount")

    def clean_resource_class(self):
        return self.cleaned_data["resource_class"].strip().upper()
