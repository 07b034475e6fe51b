"""The standard resource classes and traits, from os-resource-classes and os-traits.

Names only; providers.services.standard_names writes the missing ones to a database.
"""
import os_resource_classes
import os_traits

from providers import rules


def standard_resource_classes():
    """Standard class names in the library's canonical order."""
    return list(os_resource_classes.STANDARDS)


def standard_traits():
    return sorted(os_traits.get_traits())


def is_standard_resource_class(name):
    return name in os_resource_classes.STANDARDS


def is_standard_trait(name):
    return not rules.is_custom(name)
