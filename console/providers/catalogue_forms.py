"""Forms of the resource class and trait pages of the operator UI.

A name is checked as the API checks it (providers.rules.names), and a refused one
explained in plain words (custom_name_explained) rather than in the API's schema terms; save() makes the one service call of the matching
API request and returns a message for the user. Everything else (a name
taken, a class in use) is the services' to refuse.
"""
from django import forms

from providers import rules
from providers.standard import is_standard_resource_class, standard_traits

STANDARD_TRAITS = frozenset(standard_traits())
from providers.services import resource_classes as resource_class_services
from providers.services import traits as trait_services


class _CustomNameForm(forms.Form):
    name = forms.CharField(
        label="Name", help_text=rules.CUSTOM_NAME_HELP,
        widget=forms.TextInput(attrs={"size": 40, "placeholder": f"{rules.CUSTOM_PREFIX}…",
                                      "class": "mono", "autocomplete": "off"}))

    problem = None  # rules function: Placement's refusal of a name, or None
    standard = None  # providers.standard function: whether a name is a standard one
    kind = ""

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if type(self).standard(name):
            raise forms.ValidationError(f"{name} is a standard {self.kind}: it exists "
                                        "already, nothing to create.")
        if type(self).problem(name):
            raise forms.ValidationError(rules.custom_name_explained(name))
        return name


class ResourceClassForm(_CustomNameForm):
    """Create a custom resource class (POST /resource_classes)."""

    problem = staticmethod(rules.custom_class_name_problem)
    standard = staticmethod(is_standard_resource_class)
    kind = "resource class"

    def save(self):
        """Raises ResourceClassExists when the name is taken."""
        name = self.cleaned_data["name"]
        resource_class_services.resource_class_create(name=name)
        return f"Created resource class {name}."


class TraitForm(_CustomNameForm):
    """Create a custom trait (PUT /traits/{name}: an existing one is left as it is)."""

    problem = staticmethod(rules.custom_trait_name_problem)
    standard = staticmethod(lambda name: name in STANDARD_TRAITS)
    kind = "trait"

    def save(self):
        name = self.cleaned_data["name"]
        _, created = trait_services.trait_ensure(name=name)
        return f"Created trait {name}." if created else f"Trait {name} already exists."
