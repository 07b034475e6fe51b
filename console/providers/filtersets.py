"""Filters of the operator UI's provider list (/ui/providers/ and its CSV export).

The filters GET /resource_providers knows (`in_tree`, `required`, `member_of`,
`resources`) take the API's own grammar at the latest microversion: each form
field parses its value with providers.query_params, and each filter method
narrows with the selector step the API uses (providers.selectors.providers
``narrow_*``), so a provider is listed here exactly when the API would list it.
A value the API refuses is a form error carrying Placement's message, never a
500: grammar errors while the form is cleaned, unknown names (resolved against
the database, as the API resolves them lazily) while the queryset is filtered.

The UI adds `q` (name or uuid contains), `over_capacity` (some class used
beyond its capacity) and the order of the trees (`sort`, `usage_of`), which
the page applies: they do not narrow.
"""
import django_filters
from django import forms
from django.db.models import Q
from django.utils.html import format_html, format_html_join

from foundation.api.microversion import MAX
from foundation.domain_errors import DomainError, error_message
from foundation.uuids import is_canonical_uuid, is_uuid_like
from allocations import usage
from providers import query_params
from providers.exceptions import InvalidQuery
from providers.models import ResourceClass, ResourceProvider
from providers.selectors import providers as selectors

SORTS = [("name", "name"), ("-usage", "usage, fullest first"),
         ("usage", "usage, emptiest first")]


class RepeatedTextInput(forms.Widget):
    """One text box per occurrence of the key in the query string, plus an empty one.

    Each box is one `required=` (or `member_of=`) parameter and the boxes are
    ANDed, as the API ANDs repeated keys; a clicked trait or aggregate tag adds
    one more occurrence to the page's URL.
    """

    def __init__(self, attrs=None, placeholder=""):
        super().__init__(attrs)
        self.placeholder = placeholder

    def value_from_datadict(self, data, files, name):
        getlist = getattr(data, "getlist", None)
        values = getlist(name) if getlist else [data.get(name)]
        return [value.strip() for value in values if value and value.strip()]

    def value_omitted_from_data(self, data, files, name):
        return name not in data

    def render(self, name, value, attrs=None, renderer=None):
        values = list(value or []) + [""]
        element_id = (attrs or {}).get("id") or self.attrs.get("id") or f"id_{name}"
        # The label around the boxes names only the first: each box is named on its own
        # (the field's label, see _GrammarField.widget_attrs) once there are several.
        label = self.attrs.get("aria-label", name)
        names = ([f"{label}, box {n} of {len(values)}" for n in range(1, len(values) + 1)]
                 if len(values) > 1 else [label])
        return format_html(
            '<span class="repeated" id="{}">{}</span>', element_id,
            format_html_join("", '<input type="search" name="{}" value="{}" placeholder="{}" '
                                 'size="28" aria-label="{}">',
                             ((name, v, "" if v else self.placeholder, box)
                              for v, box in zip(values, names))))


class _GrammarField(forms.Field):
    """A field whose cleaned value is query_params' parse of what was typed; the
    parser's InvalidQuery becomes a form error with Placement's message."""

    def parse(self, value):
        raise NotImplementedError

    def widget_attrs(self, widget):
        """The label, for a widget of several boxes to name each box by."""
        attrs = super().widget_attrs(widget)
        if isinstance(widget, RepeatedTextInput) and self.label:
            attrs["aria-label"] = str(self.label)
        return attrs

    def clean(self, value):
        if not value:
            return None
        try:
            return self.parse(value)
        except InvalidQuery as exc:
            raise forms.ValidationError(error_message(exc))


class TraitQueryField(_GrammarField):
    widget = RepeatedTextInput(placeholder="HW_CPU_X86_AVX2,!CUSTOM_X  or  in:A,B")

    def parse(self, values):
        return query_params.parse_required(values, MAX)


class AggregateQueryField(_GrammarField):
    widget = RepeatedTextInput(placeholder="aggregate uuid, in:u1,u2  or  !u3")

    def parse(self, values):
        return query_params.parse_member_of(values, MAX)


class ResourcesField(_GrammarField):
    widget = forms.TextInput(attrs={"type": "search", "placeholder": "VCPU:2,MEMORY_MB:1024",
                                    "size": 26})

    def parse(self, value):
        amounts = query_params.parse_resources(value)
        # The API's answer is the empty list (query_params.NEVER_FITS); the page says why.
        too_large = [name for name, amount in amounts.items()
                     if amount >= query_params.NEVER_FITS]
        if too_large:
            raise forms.ValidationError(
                f"No inventory holds more than {query_params.NEVER_FITS - 1:,} of a "
                f"resource class: nothing can match {', '.join(too_large)}.")
        return amounts


class ProviderUuidField(forms.CharField):
    """A provider uuid checked by the API's query schema (canonical form)."""

    def clean(self, value):
        value = super().clean(value)
        if value and not is_canonical_uuid(value):
            # The API's 400 message for in_tree, without the schema dump.
            raise forms.ValidationError(
                f"Invalid query string parameters: {value!r} is not a 'uuid'")
        return value


class ProviderUuidOrNameField(ProviderUuidField):
    """A provider's uuid (checked as the API checks it) or its name (a host name: the
    operator's word for a tree); cleans to the uuid. Unknown names are a form error."""

    def clean(self, value):
        value = forms.CharField.clean(self, value).strip()
        if value and not is_uuid_like(value):
            found = ResourceProvider.objects.filter(name=value).values_list(
                "uuid", flat=True).first()
            if found is None:
                raise forms.ValidationError(f"No resource provider is named “{value}”.")
            return found
        return super().clean(value)


def _grammar_filter(field):
    """A django-filter Filter whose form field is `field` (cleaned value: the parse)."""
    return type(f"{field.__name__[:-5]}Filter", (django_filters.Filter,), {"field_class": field})


UuidOrNameFilter = _grammar_filter(ProviderUuidOrNameField)
TraitQueryFilter = _grammar_filter(TraitQueryField)
AggregateQueryFilter = _grammar_filter(AggregateQueryField)
ResourcesFilter = _grammar_filter(ResourcesField)


class ProviderFilterForm(forms.Form):
    def clean_usage_of(self):
        """An unknown class to order by is refused like the API refuses one (one
        query, only when a class is named)."""
        name = self.cleaned_data.get("usage_of")
        if name and not ResourceClass.objects.filter(name=name).exists():
            raise forms.ValidationError(f"No such resource class {name}.")
        return name


class ProviderFilterSet(django_filters.FilterSet):
    """The provider list's filters (see the module docstring). Bind it to request.GET
    and read `matching()`; `is_filtering()` tells whether anything narrows."""

    q = django_filters.CharFilter(
        label="Name or uuid contains", method="filter_q",
        widget=forms.TextInput(attrs={"type": "search", "size": 22}))
    in_tree = UuidOrNameFilter(
        label="In tree of (host name or uuid)", method="filter_in_tree",
        widget=forms.TextInput(attrs={"type": "search", "size": 36}))
    required = TraitQueryFilter(label="Traits (required / !forbidden)", method="filter_required")
    member_of = AggregateQueryFilter(label="Member of aggregate", method="filter_member_of")
    resources = ResourcesFilter(label="Resources that fit now", method="filter_resources")
    over_capacity = django_filters.BooleanFilter(
        label="Over capacity", method="filter_over_capacity", widget=forms.CheckboxInput)
    sort = django_filters.ChoiceFilter(
        label="Sort trees by", choices=SORTS, empty_label=None, method="keep")
    usage_of = django_filters.CharFilter(
        label="Usage of class", method="keep",
        widget=forms.TextInput(attrs={"type": "search", "size": 14, "placeholder": "any class",
                                      "list": "resource-classes"}))

    # The fields that narrow (sort and usage_of only order what they keep).
    NARROWING = ("q", "in_tree", "required", "member_of", "resources", "over_capacity")

    class Meta:
        model = ResourceProvider
        fields = []
        form = ProviderFilterForm

    # --- filter methods: the API's steps, in the API's order ----------------------

    def filter_q(self, qs, name, value):
        return qs.filter(Q(name__icontains=value) | Q(uuid__icontains=value))

    def filter_in_tree(self, qs, name, value):
        return selectors.narrow_to_tree(qs, value)

    def filter_required(self, qs, name, value):
        return selectors.narrow_by_traits(qs, value)

    def filter_member_of(self, qs, name, value):
        return selectors.narrow_by_aggregates(qs, value)

    def filter_resources(self, qs, name, value):
        return selectors.narrow_by_resources(qs, value)

    def filter_over_capacity(self, qs, name, value):
        return qs.filter(id__in=usage.over_capacity_provider_ids()) if value else qs

    def keep(self, qs, name, value):
        return qs

    def filter_queryset(self, queryset):
        """Apply the filters in order, like provider_list(): a name the database does
        not know is a form error with the API's message, and an answer already known
        to be empty stops the steps before later names are resolved."""
        for name, value in list(self.form.cleaned_data.items()):
            try:
                queryset = self.filters[name].filter(queryset, value)
            except DomainError as exc:
                self.form.add_error(name, error_message(exc))
                return queryset.none()
            if selectors.is_empty(queryset):
                break
        return queryset

    # --- what the pages read ----------------------------------------------------------

    def matching(self):
        """The providers every filter keeps (a lazy QuerySet), or None when a filter
        value is refused (the form then carries the message)."""
        if not self.is_valid():
            return None
        qs = self.qs
        if self.form.errors:
            return None
        return qs

    def is_filtering(self):
        """Whether any narrowing filter has a value (the page then marks matches)."""
        data = self.form.cleaned_data if self.form.is_bound and self.is_valid() else {}
        return any(data.get(name) for name in self.NARROWING)

    def sort_key(self):
        """(sort, usage_of): 'name', '-usage' or 'usage'; a resource class name or None."""
        data = self.form.cleaned_data
        return data.get("sort") or "name", data.get("usage_of") or None
