"""{% load amounts %}: {{ n|thousands }} shows 1234567 as 1,234,567 (anything else as is)."""
from django import template

register = template.Library()


@register.filter
def thousands(value):
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else value
