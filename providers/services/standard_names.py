"""The standard resource classes and traits (providers.standard) written to a database."""
from django.db import transaction

from providers.models import ResourceClass, Trait
from providers.services import change_log
from providers.standard import standard_resource_classes, standard_traits


def standard_names_sync(*, using="default"):
    """Insert the standard classes and traits that database `using` lacks, with their
    change log entries, in one transaction; never remove anything (custom names, and
    standard ones a newer library dropped, stay).

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
