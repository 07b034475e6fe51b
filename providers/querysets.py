"""Reusable provider predicates: they build queries and decide nothing.

Used by providers.selectors (GET /resource_providers) and by the allocation
candidates engine. Every filter only narrows what it is given.

Two flavours:

* ``*_ids(...)`` return a ``values_list("provider_id", flat=True)`` QuerySet of
  provider ids, usable as a subquery (``id__in=...``) or evaluated into a
  set (``set(qs)``) by the engine;
* the other functions take a ResourceProvider QuerySet and return it
  narrowed (they are thin wrappers over the ``*_ids`` subqueries).

Identifiers: resource classes and traits are passed as database ids (the
caller resolves names first, because unknown names are API errors);
aggregates are passed as uuid strings (an unknown aggregate simply matches
nothing, and stored aggregate ids are compared as exact strings).

Signatures
----------
capacity_provider_ids(rc_id, amount) -> QuerySet[int]
    Providers where ``amount`` of class ``rc_id`` fits right now:
    inventory exists, ``min_unit <= amount <= max_unit``,
    ``amount % step_size == 0`` and
    ``used + amount <= (total - reserved) * allocation_ratio``.
with_capacity(qs, amounts: Mapping[rc_id, int]) -> qs
    ANDs ``capacity_provider_ids`` for every class.
room_q(amount, units=, used=) -> Q
    The test of both, on Inventory rows (also the consumer page's move picker).
providers_with_all_traits_ids(trait_ids) / with_all_traits(qs, trait_ids)
providers_with_any_traits_ids(trait_ids) / with_any_traits(qs, trait_ids)
without_traits(qs, trait_ids)          — none of them
with_trait_sets(qs, any_of_sets)       — at least one of every set (ANDed)
providers_in_aggregates_ids(agg_uuids) — member of at least one of them
member_of(qs, any_of_sets)             — at least one aggregate of every set
not_member_of(qs, agg_uuids)           — member of none of them
in_tree(qs, root_id)                   — providers whose root is ``root_id``
over_capacity_provider_ids()           — providers using more of some class than its
                                         capacity (inventory lowered under usage, reshaper)
capacity_expression()                  — (total - reserved) * allocation_ratio in SQL
usage_subquery(rc_id, provider_ref)    — SUM(used) of one class on the provider
                                         referenced by ``provider_ref`` (OuterRef)
with_usage(inventories)                — Inventory rows annotated with ``used``
over_capacity(inventories)             — Inventory rows whose usage exceeds capacity
"""
from django.db.models import (
    Count,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Mod
from django.db.models.lookups import Exact, LessThanOrEqual

from providers.models import Inventory, ProviderAggregate, ProviderTrait, ResourceProvider


def capacity_expression():
    """The SQL twin of providers.rules.capacity(): (total - reserved) * allocation_ratio
    on Inventory rows, as a float (the database filters and sorts by it).

    tests/providers/test_capacity_twins.py holds it equal to the Python formula.
    """
    return ExpressionWrapper(Cast(F("total") - F("reserved"), FloatField())
                             * F("allocation_ratio"), output_field=FloatField())


def providers_with_all_traits_ids(trait_ids):
    """Ids of providers that have every trait in `trait_ids` (non-empty)."""
    trait_ids = set(trait_ids)
    return (ProviderTrait.objects
            .filter(trait_id__in=trait_ids)
            .order_by()
            .values("provider_id")
            .annotate(_n=Count("trait_id"))
            .filter(_n=len(trait_ids))
            .values_list("provider_id", flat=True))


def providers_with_any_traits_ids(trait_ids):
    """Ids of providers that have at least one trait in `trait_ids`."""
    return (ProviderTrait.objects
            .filter(trait_id__in=set(trait_ids))
            .values_list("provider_id", flat=True))


def with_all_traits(qs, trait_ids):
    if not trait_ids:
        return qs
    return qs.filter(id__in=providers_with_all_traits_ids(trait_ids))


def with_any_traits(qs, trait_ids):
    return qs.filter(id__in=providers_with_any_traits_ids(trait_ids))


def without_traits(qs, trait_ids):
    if not trait_ids:
        return qs
    return qs.exclude(id__in=providers_with_any_traits_ids(trait_ids))


def with_trait_sets(qs, any_of_sets):
    """At least one trait id of every set in `any_of_sets` (sets are ANDed)."""
    for trait_ids in any_of_sets:
        qs = with_any_traits(qs, trait_ids)
    return qs


def providers_in_aggregates_ids(aggregate_uuids):
    """Ids of providers associated with at least one of `aggregate_uuids` (exact strings)."""
    return (ProviderAggregate.objects
            .filter(aggregate__uuid__in=set(aggregate_uuids))
            .values_list("provider_id", flat=True))


def member_of(qs, any_of_sets):
    """Providers in at least one aggregate of every set (sets are ANDed)."""
    for aggregate_uuids in any_of_sets:
        qs = qs.filter(id__in=providers_in_aggregates_ids(aggregate_uuids))
    return qs


def not_member_of(qs, aggregate_uuids):
    """Providers in none of `aggregate_uuids`."""
    if not aggregate_uuids:
        return qs
    return qs.exclude(id__in=providers_in_aggregates_ids(aggregate_uuids))


def in_tree(qs, root_id):
    """Providers of the tree whose root provider id is `root_id`."""
    return qs.filter(root_id=root_id)

