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


class FlavorForm(forms.Form):
    """A flavor's worth of resources and filters, written as a GET /allocation_candidates
    query string (query()): what nova asks for a server of that flavor, unsuffixed."""

    vcpus = forms.IntegerField(label="VCPU", required=False, min_value=1)
    ram = forms.IntegerField(label="RAM", required=False, min_value=1)
    ram_unit = forms.ChoiceField(label="RAM unit", choices=[("MB", "MB"), ("GB", "GB")],
                                 initial="GB", required=False)
    disk = forms.IntegerField(label="Disk (GB)", required=False, min_value=1)
    required = forms.CharField(label="Required traits", required=False, max_length=2000,
                               widget=forms.TextInput(attrs={"placeholder": "HW_CPU_X86_AVX2"}))
    forbidden = forms.CharField(label="Forbidden traits", required=False, max_length=2000,
                                widget=forms.TextInput(attrs={"placeholder": "CUSTOM_X"}))
    aggregates = forms.CharField(label="In one of the aggregates (uuids)", required=False,
                                 max_length=2000)
    limit = forms.IntegerField(label="Limit", required=False, min_value=1)

    def clean(self):
        cleaned = super().clean()
        if not self.errors and not any(cleaned.get(f) for f in ("vcpus", "ram", "disk")):
            raise forms.ValidationError("Give at least one of VCPU, RAM and disk.")
        return cleaned

    @staticmethod
    def _names(text):
        return [name for name in text.replace(",", " ").split() if name]

    def query(self):
        """The query string (names as typed: the API judges them)."""
        data = self.cleaned_data
        memory = data.get("ram")
        if memory and data.get("ram_unit", "GB") != "MB":
            memory *= 1024
        amounts = [(rc, n) for rc, n in (("VCPU", data.get("vcpus")), ("MEMORY_MB", memory),
                                         ("DISK_GB", data.get("disk"))) if n]
        parts = ["resources=" + ",".join(f"{rc}:{n}" for rc, n in amounts)]
        traits = self._names(data["required"]) + ["!" + t for t in self._names(data["forbidden"])]
        if traits:
            parts.append("required=" + ",".join(traits))
        aggregates = self._names(data["aggregates"])
        if aggregates:
            parts.append("member_of=in:" + ",".join(aggregates))
        if data.get("limit"):
            parts.append(f"limit={data['limit']}")
        return "&".join(parts)


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
