"""The standard resource classes and traits, from os-resource-classes and os-traits."""
import os_resource_classes
import os_traits
from django.db import transaction

from providers import rules
from providers.models import ResourceClass, Trait
from providers.services import change_log


def standard_resource_classes():
    """Standard class names in the library's canonical order."""
    return list(os_resource_classes.STANDARDS)


def standard_traits():
    return sorted(os_traits.get_traits())


def sync_standard_names(using="default"):
    """Insert standard classes and traits that are missing; never remove anything.

    Returns (added_classes, added_traits) as lists of names.
    """
    with transaction.atomic(using=using):
        have_rc = set(ResourceClass.objects.using(using).values_list("name", flat=True))
        added_rc = [n for n in standard_resource_classes() if n not in have_rc]
        ResourceClass.objects.using(using).bulk_create(
            [ResourceClass(name=n) for n in added_rc], ignore_conflicts=True
        )
        have_traits = set(Trait.objects.using(using).values_list("name", flat=True))
        added_traits = [n for n in standard_traits() if n not in have_traits]
        Trait.objects.using(using).bulk_create(
            [Trait(name=n) for n in added_traits], ignore_conflicts=True
        )
        change_log.changes_record(
            [change_log.Change(change_log.RESOURCE_CLASS, name, "create", after={"name": name})
             for name in added_rc]
            + [change_log.Change(change_log.TRAIT, name, "create", after={"name": name})
               for name in added_traits], using=using)
    return added_rc, added_traits


def is_standard_resource_class(name):
    return name in os_resource_classes.STANDARDS


def is_standard_trait(name):
    return not rules.is_custom(name)
