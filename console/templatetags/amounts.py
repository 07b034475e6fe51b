"""Template tags for amounts (console.numbers): `{% load amounts %}`."""
from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from console import numbers

register = template.Library()


@register.filter
def number(value):
    """{{ value|number }}: thousands separators, short form for very long numbers."""
    return numbers.number(value)


@register.simple_tag
def amount(value, resource_class=""):
    """{% amount value rc %}: the number, its size beside it where the class has a size
    unit, the exact value in a tooltip where it is shown in short form."""
    shown = numbers.number(value)
    if numbers.is_long(value):
        shown = format_html('<span title="{}">{}</span>', f"{value:,}", shown)
    unit = numbers.size(resource_class, value)
    if unit:
        return format_html('{} <span class="unit">{}</span>', shown, unit)
    return format_html("{}", shown)


@register.filter
def class_name(name):
    """{{ rc|class_name }}: a resource class or trait name that may break after its
    underscores (NET_BW_EGR_­KILOBIT_­PER_SEC) rather than widen a narrow column."""
    return format_html_join(mark_safe("<wbr>"), "{}",
                            ((part,) for part in _after_underscores(str(name))))


def _after_underscores(name):
    parts = name.split("_")
    return [f"{part}_" for part in parts[:-1]] + parts[-1:]


@register.filter(name="percent")
def percent_filter(value):
    """{{ value|percent }}: '75.0%' (console.numbers.percent)."""
    return numbers.percent(value)


@register.filter
def share(used, capacity):
    """used of capacity as a percentage, the one rounding (console.numbers.percent);
    '' without capacity."""
    if not capacity or capacity <= 0:
        return ""
    return numbers.percent(used * 100.0 / capacity)


@register.filter
def of(mapping, key):
    """mapping[key], or "" (a dict of a page's rows read by each row's key)."""
    return mapping.get(key, "")
