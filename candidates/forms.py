"""The candidates explorer's form (/ui/candidates/)."""
from django import forms

from candidates.explain import MAX_PER_PAGE, PER_PAGE
from candidates.options import extensions
from placement_site.api import microversion


def candidate_versions():
    """Microversions at which GET /allocation_candidates exists (1.10+), latest first:
    up to 1.40 when an opt-in extension is on."""
    return [f"1.{minor}" for minor in range(microversion.latest().minor, 9, -1)]


class CandidatesForm(forms.Form):
    q = forms.CharField(
        label="Query string", max_length=4000,
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
