"""Form fields the admin and the operator console share."""
from django import forms


class GenerationField(forms.IntegerField):
    """The provider generation the user saw, posted back for the compare-and-swap."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 0)
        super().__init__(**kwargs)
