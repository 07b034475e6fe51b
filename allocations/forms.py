"""Forms of the allocation pages of the operator UI (/ui/usages/)."""
from django import forms

from allocations import selectors
from allocations.models import UNKNOWN_CONSUMER_TYPE


class UsageFilterForm(forms.Form):
    GROUP_BY = (("type", "project, user and consumer type"),
                ("user", "project and user"),
                ("project", "project"))

    project = forms.CharField(required=False, max_length=255)
    user = forms.CharField(required=False, max_length=255)
    consumer_type = forms.CharField(required=False, max_length=255,
                                    help_text=f'A type name, or "{UNKNOWN_CONSUMER_TYPE}" for '
                                              "consumers without a type.")
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
        if consumer_type == UNKNOWN_CONSUMER_TYPE:
            filters["consumer__consumer_type__isnull"] = True
        elif consumer_type:
            filters["consumer__consumer_type__name"] = consumer_type
        return filters

    @staticmethod
    def consumer_type_names():
        return selectors.consumer_type_names()
