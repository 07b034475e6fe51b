"""Usage as providers asks it: the questions providers' own rules need answered about
what is allocated against its providers.

The allocations live a floor up: the allocations app imports providers, never the other
way, and nothing in providers names the allocations' fields. Yet providers' rules need
usage: GET /resource_providers?resources= lists the providers where an amount fits, an
inventory in use cannot be deleted, a provider or class in use cannot be deleted, the
admin warns before a capacity falls below what is allocated. Providers asks here;
allocations.usage answers, installed when Django starts (allocations/apps.py).
"""
from django.core.exceptions import ImproperlyConfigured

_answers = None


def install(answers):
    """Let `answers` (a module or object with the functions below) answer usage."""
    global _answers
    _answers = answers


def _ask():
    if _answers is None:
        raise ImproperlyConfigured("usage questions need the allocations app installed")
    return _answers


def with_capacity(qs, amounts):
    """Narrow the ResourceProvider QuerySet `qs` to providers where every
    {rc_id: amount} fits now (each on its own)."""
    return _ask().with_capacity(qs, amounts)


def classes_in_use(provider, rc_ids):
    """Names of the classes among `rc_ids` held on `provider`, in class id order."""
    return _ask().classes_in_use(provider, rc_ids)


def provider_in_use(provider):
    return _ask().provider_in_use(provider)


def class_in_use(resource_class, provider=None):
    return _ask().class_in_use(resource_class, provider)


def consumers_of_class(resource_class):
    return _ask().consumers_of_class(resource_class)


def inventories_below_usage(provider, inventories):
    """The classes of `inventories` ({name: record}) whose new capacity would be below
    what is allocated against `provider` now ([BelowUsage], see allocations.usage)."""
    return _ask().inventories_below_usage(provider, inventories)
