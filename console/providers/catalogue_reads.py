"""Reads for the resource class and trait pages: each name with how much it is used.

A fixed number of queries per page (grouped counts, never one query per name).
"""
from dataclasses import dataclass

from django.db.models import Count

from allocations.usage import used_per_class
from providers.models import Inventory, ResourceClass, Trait
from providers.standard import is_standard_resource_class, is_standard_trait


@dataclass(frozen=True)
class CatalogueRow:
    """A resource class or trait: its name, whether it is standard, and its use."""

    name: str
    standard: bool
    providers: int      # providers with inventory of the class / with the trait
    used: int = 0       # units allocated (resource classes only)

    @property
    def in_use(self):
        return bool(self.providers or self.used)


def resource_class_rows():
    """[CatalogueRow] of every resource class, custom ones first, by name (three queries)."""
    inventories = dict(Inventory.objects.order_by().values("resource_class_id")
                       .annotate(n=Count("id")).values_list("resource_class_id", "n"))
    used = used_per_class()
    rows = [CatalogueRow(name, is_standard_resource_class(name), inventories.get(pk, 0),
                         used.get(pk, 0))
            for pk, name in ResourceClass.objects.values_list("id", "name")]
    return sorted(rows, key=lambda row: (row.standard, row.name))


def trait_rows(contains=""):
    """[CatalogueRow] of the traits whose name contains `contains` (any case), custom
    ones first, by name (one query)."""
    traits = Trait.objects.order_by()
    if contains:
        traits = traits.filter(name__icontains=contains)
    rows = [CatalogueRow(name, is_standard_trait(name), n)
            for name, n in traits.annotate(n=Count("providertrait")).values_list("name", "n")]
    return sorted(rows, key=lambda row: (row.standard, row.name))
