"""Whether the database holds the installed libraries' standard names (readiness)."""
from providers.models import ResourceClass, Trait
from providers.standard import standard_resource_classes, standard_traits


# The newest names of the libraries: present only when the standard names were synced
# after the libraries were installed (providers/apps.py does it after every migrate).
NEWEST_STANDARD_CLASS = standard_resource_classes()[-1]
NEWEST_STANDARD_TRAIT = standard_traits()[-1]


def standard_names_synced():
    """True when the database has the installed libraries' newest standard resource class
    and trait (two lookups by unique name): the readiness check asks it."""
    return (ResourceClass.objects.filter(name=NEWEST_STANDARD_CLASS).exists()
            and Trait.objects.filter(name=NEWEST_STANDARD_TRAIT).exists())
