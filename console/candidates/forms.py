"""The candidates explorer's forms (/ui/candidates/): the query, the flavor that writes
one, and the "why not?" explainer's."""
import re
from urllib.parse import quote

from django import forms
from django.conf import settings
from django.http import QueryDict

from candidates.explain import MAX_PER_PAGE, PER_PAGE
from candidates.options import extensions
from candidates.request import GROUP_POLICIES, QUERY_PREFIX, group_suffix_rule, parse_request
from foundation.api import microversion
from foundation.api.microversion import Version
from foundation.domain_errors import DomainError, error_message
from providers.query_params import parse_member_of_value, parse_resources

GROUP_ROWS = 3   # granular groups the flavor form offers (no JavaScript adds rows)


def candidate_versions():
    """Microversions at which GET /allocation_candidates exists (1.10+), latest first:
    up to 1.40 when an opt-in extension is on."""
    return [f"1.{minor}" for minor in range(microversion.latest().minor, 9, -1)]


class CandidatesForm(forms.Form):
    # A query too long for a URL is posted; the body limit bounds it (request_body.py).
    q = forms.CharField(
        label="Query string", max_length=settings.PLACEMENT_MAX_REQUEST_BODY_SIZE,
        widget=forms.TextInput(attrs={"size": 100, "class": "mono",
                                      "placeholder": "resources=VCPU:1,MEMORY_MB:512"
                                                     "&required=HW_CPU_X86_AVX2"}))
    version = forms.ChoiceField(label="Microversion")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        offered = candidate_versions()
        self.fields["version"].choices = [(v, v) for v in offered]
        self.fields["version"].initial = offered[0]
        self.extensions = sorted(extensions())

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


class OrderForm(forms.Form):
    """How the explorer lists an answer: in which order (console.candidates.ordering) and
    which trees; the answer itself is the API's."""

    order = forms.ChoiceField(label="Order", required=False, choices=[
        ("", "as the API answers"), ("name", "by host (tree root) name"),
        ("most_room", "most room left"), ("least_room", "least room left")])
    host = forms.CharField(
        label="Host name contains", required=False, max_length=255,
        widget=forms.TextInput(attrs={"size": 20, "placeholder": "part of a name"}))

    def clean_order(self):
        return self.cleaned_data["order"] or None

    def clean_host(self):
        return self.cleaned_data["host"].strip() or None

    def chosen(self):
        """(order, host) as cleaned, None for what is not given or not valid."""
        self.is_valid()   # cleans: what is not valid is left out of cleaned_data
        return self.cleaned_data.get("order"), self.cleaned_data.get("host")

    def params(self):
        """The chosen order and host as query parameters, for links that keep them."""
        order, host = self.chosen()
        return {key: value for key, value in (("order", order), ("host", host)) if value}


def _names(text):
    """Names typed with commas or spaces between them."""
    return text.replace(",", " ").split()


def _param(key, value):
    """key=value of a query string, the value as readable as it stays unambiguous."""
    return f"{key}={quote(value, safe=',:!')}"


class _GroupFields(forms.Form):
    """What one request group asks for: resources, required and forbidden traits, and
    aggregates. Malformed resources and aggregates are refused here, with the words of the
    API's own parsers (providers.query_params); names are left for the API to judge."""

    # No placeholders: grey examples in a box read as values (issue 43); the labels say
    # what goes in.
    resources = forms.CharField(label="Resources (CLASS:amount)", required=False,
                                max_length=2000)
    required = forms.CharField(label="Required traits", required=False, max_length=2000)
    forbidden = forms.CharField(label="Forbidden traits", required=False, max_length=2000)
    aggregates = forms.CharField(label="In one of the aggregates (uuids)", required=False,
                                 max_length=2000)

    def __init__(self, *args, version, **kwargs):
        super().__init__(*args, **kwargs)
        self.version = version

    def clean_resources(self):
        amounts = ",".join(_names(self.cleaned_data["resources"]))
        if amounts:
            try:
                parse_resources(amounts)
            except DomainError as exc:
                raise forms.ValidationError(
                    f"{error_message(exc)} Write CLASS:amount, e.g. VCPU:2.") from exc
        return amounts

    def clean_required(self):
        return _names(self.cleaned_data["required"])

    def clean_forbidden(self):
        return _names(self.cleaned_data["forbidden"])

    def clean_aggregates(self):
        aggregates = _names(self.cleaned_data["aggregates"])
        if aggregates:
            try:
                parse_member_of_value("in:" + ",".join(aggregates), self.version)
            except DomainError as exc:
                raise forms.ValidationError(
                    error_message(exc).removeprefix(QUERY_PREFIX)) from exc
        return aggregates

    def params(self, suffix, amounts=()):
        """[key=value] of this group (keys suffixed with `suffix`); `amounts` (class,
        amount) come before the typed resources."""
        data = self.cleaned_data
        resources = [f"{rc}:{n}" for rc, n in amounts] + _names(data["resources"])
        params = [_param(f"resources{suffix}", ",".join(resources))] if resources else []
        traits = data["required"] + ["!" + name for name in data["forbidden"]]
        if traits:
            params.append(_param(f"required{suffix}", ",".join(traits)))
        if data["aggregates"]:
            params.append(_param(f"member_of{suffix}", "in:" + ",".join(data["aggregates"])))
        return params


class GroupForm(_GroupFields):
    """One granular request group (`resources{S}`, `required{S}`, `member_of{S}`); a row
    left blank is no group."""

    suffix = forms.CharField(label="Suffix", required=False, max_length=200,
                             widget=forms.TextInput(attrs={"size": 8}))
    field_order = ["suffix", "resources", "required", "forbidden", "aggregates"]

    def __init__(self, *args, row, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["resources"].label = "Resources (CLASS:amount)"
        for field in self.fields.values():   # the row's labels are its table's headers
            field.widget.attrs.update({"aria-label": f"Group {row}: {field.label}",
                                       "size": field.widget.attrs.get("size", 16)})

    def clean_suffix(self):
        suffix = self.cleaned_data["suffix"].strip()
        pattern, words = group_suffix_rule(self.version)
        if suffix and not re.fullmatch(pattern, suffix):
            raise forms.ValidationError(
                f"“{suffix}” is not a group suffix: a suffix is {words}.")
        return suffix

    def clean(self):
        cleaned = super().clean()
        if not self.errors and not cleaned["suffix"]:
            self.add_error("suffix", "Give this group a suffix (the 1 of resources1).")
        return cleaned


class BaseGroupFormSet(forms.BaseFormSet):
    def get_form_kwargs(self, index):
        return {**super().get_form_kwargs(index), "row": index + 1}

    def clean(self):
        if any(self.errors):
            return
        seen = set()
        for form in self.filled():
            suffix = form.cleaned_data["suffix"]
            if suffix in seen:
                raise forms.ValidationError(f"Two groups have the suffix “{suffix}”.")
            seen.add(suffix)

    def filled(self):
        """The rows that are groups (a blank row is none)."""
        return [form for form in self.forms if form.has_changed()]


GroupFormSet = forms.formset_factory(GroupForm, formset=BaseGroupFormSet, extra=GROUP_ROWS,
                                     max_num=GROUP_ROWS, absolute_max=GROUP_ROWS)


class FlavorForm(_GroupFields):
    """A flavor's worth of resources and filters, with granular request groups, written
    as a GET /allocation_candidates query string (query()) at the latest microversion:
    what nova asks for a server of a flavor with extra specs. The query must parse as
    the API parses it (names are not looked up: the explorer shows what the API says
    of them)."""

    vcpus = forms.IntegerField(label="VCPU", required=False, min_value=1)
    ram = forms.IntegerField(label="RAM", required=False, min_value=1)
    ram_unit = forms.ChoiceField(label="RAM unit", choices=[("MB", "MB"), ("GB", "GB")],
                                 initial="GB", required=False)
    disk = forms.IntegerField(label="Disk (GB)", required=False, min_value=1)
    group_policy = forms.ChoiceField(
        label="Group policy", required=False,
        choices=[("", "—")] + [(policy, policy) for policy in GROUP_POLICIES])
    root_required = forms.CharField(label="Root provider: required traits", required=False,
                                    max_length=2000)
    root_forbidden = forms.CharField(label="Root provider: forbidden traits", required=False,
                                     max_length=2000)
    limit = forms.IntegerField(label="Limit", required=False, min_value=1)

    def __init__(self, data=None, **kwargs):
        self.version_name = candidate_versions()[0]
        version = Version.parse(self.version_name)
        super().__init__(data, version=version, **kwargs)
        self.fields["resources"].label = "Other resources (CLASS:amount)"
        self.groups = GroupFormSet(data, prefix="group", form_kwargs={"version": version})

    def is_valid(self):
        valid = super().is_valid()
        return self.groups.is_valid() and valid

    def clean_root_required(self):
        return _names(self.cleaned_data["root_required"])

    def clean_root_forbidden(self):
        return _names(self.cleaned_data["root_forbidden"])

    def clean(self):
        cleaned = super().clean()
        if self.errors or not self.groups.is_valid():
            return cleaned
        if not (self._amounts() or cleaned["resources"]
                or any(group.cleaned_data["resources"] for group in self.groups.filled())):
            raise forms.ValidationError(
                "Give at least one of VCPU, RAM and disk, or the resources of a group.")
        try:
            parse_request(QueryDict(self.query()), self.version, extensions())
        except DomainError as exc:
            raise forms.ValidationError(error_message(exc)) from exc
        return cleaned

    def _amounts(self):
        data = self.cleaned_data
        memory = data.get("ram")
        if memory and data.get("ram_unit", "GB") != "MB":
            memory *= 1024
        return [(rc, n) for rc, n in (("VCPU", data.get("vcpus")), ("MEMORY_MB", memory),
                                      ("DISK_GB", data.get("disk"))) if n]

    def query(self):
        """The query string (names as typed: the API judges them)."""
        data = self.cleaned_data
        params = self.params("", amounts=self._amounts())
        for group in self.groups.filled():
            params += group.params(group.cleaned_data["suffix"])
        if data["group_policy"]:
            params.append(_param("group_policy", data["group_policy"]))
        root = data["root_required"] + ["!" + name for name in data["root_forbidden"]]
        if root:
            params.append(_param("root_required", ",".join(root)))
        if data.get("limit"):
            params.append(_param("limit", str(data["limit"])))
        return "&".join(params)


class WhyNotForm(CandidatesForm):
    """The "why not?" explainer's form (/ui/candidates/why-not/ and why-not.json)."""

    tree = forms.CharField(
        label="Trees of (provider uuid, name or part of a name)", required=False,
        max_length=255, widget=forms.TextInput(attrs={"size": 30, "placeholder": "all trees"}))
    excluded = forms.BooleanField(required=False, label="Excluded trees only")
    page = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    per_page = forms.IntegerField(
        label="Trees per page", required=False, min_value=1, max_value=MAX_PER_PAGE,
        widget=forms.Select(choices=[("", PER_PAGE)] + [(n, n) for n in (50, MAX_PER_PAGE)]))

    def clean_tree(self):
        return self.cleaned_data["tree"].strip() or None
