"""Reads of resource providers and what hangs off them.

provider_list() follows the lazy evaluation order of GET /resource_providers
(resource-providers.md "Order of evaluation"): names are resolved step by
step and an empty result short-circuits before later names are validated.
"""
from django.db.models import F, OuterRef, Subquery
from django.db.models.query import EmptyQuerySet

from providers import exceptions, querysets, usage
from providers.models import Inventory, ProviderAggregate, ResourceClass, ResourceProvider, Trait

# Columns of the provider representation, fetched in one query.
ROW_FIELDS = ("id", "uuid", "name", "generation", "parent_uuid", "root_uuid",
              "created_at", "updated_at")


def _uuid_of(field):
    return Subquery(ResourceProvider.objects.filter(pk=OuterRef(field)).values("uuid")[:1])


def _rows(qs, narrowed=False):
    """Representation rows of `qs`. narrowed: qs is filtered by trait, aggregate or
    capacity subqueries, whose row counts PostgreSQL underestimates (often as one);
    the parent and root uuids are then looked up per row, because a join planned for
    one row nested-loops over the whole table. Unfiltered, the joins are cheaper."""
    if narrowed:
        uuids = {"parent_uuid": _uuid_of("parent_id"), "root_uuid": _uuid_of("root_id")}
    else:
        uuids = {"parent_uuid": F("parent__uuid"), "root_uuid": F("root__uuid")}
    return list(qs.annotate(**uuids).order_by("id").values(*ROW_FIELDS))


def provider_get(uuid):
    """The ResourceProvider with exactly this uuid. Raises ProviderNotFound."""
    provider = ResourceProvider.objects.filter(uuid=uuid).first()
    if provider is None:
        raise exceptions.ProviderNotFound(uuid)
    return provider


def provider_row(provider_id):
    """The representation row (dict with ROW_FIELDS) of one provider."""
    return _rows(ResourceProvider.objects.filter(pk=provider_id))[0]


def _trait_ids(names):
    found = dict(Trait.objects.filter(name__in=names).values_list("name", "id"))
    missing = sorted(set(names) - set(found))
    if missing:
        raise exceptions.InvalidQuery('Invalid trait(s) in "required" parameter: '
                         f"No such trait(s): {', '.join(missing)}.")
    return found


def narrow_to_tree(qs, in_tree):
    """`qs` narrowed to the tree of the provider with uuid `in_tree` (an unknown
    uuid: empty, as GET /resource_providers?in_tree= answers)."""
    root_id = (ResourceProvider.objects.filter(uuid=in_tree)
               .values_list("root_id", flat=True).first())
    if root_id is None:
        return qs.none()
    return querysets.in_tree(qs, root_id)


def narrow_by_traits(qs, required):
    """`qs` narrowed by a query_params.TraitQuery (the provider's own traits).

    Positive names are resolved first: when no provider at all has them the answer
    is empty before the forbidden names are resolved (upstream's order). Raises
    InvalidQuery naming unknown traits.
    """
    positive = set(required.required)
    for names in required.any_of:
        positive |= names
    if positive:
        ids = _trait_ids(positive)
        having = querysets.with_trait_sets(
            querysets.with_all_traits(ResourceProvider.objects.all(),
                                      [ids[n] for n in required.required]),
            [{ids[n] for n in names} for names in required.any_of])
        if not having.exists():  # checked over all providers, as upstream does
            return qs.none()
        qs = qs.filter(id__in=having.values("id"))
    if required.forbidden:
        ids = _trait_ids(required.forbidden)
        qs = querysets.without_traits(qs, list(ids.values()))
    return qs


def narrow_by_aggregates(qs, member_of):
    """`qs` narrowed by a query_params.AggregateQuery (the provider's own aggregates)."""
    if member_of.any_of:
        members = querysets.member_of(ResourceProvider.objects.all(), member_of.any_of)
        if not members.exists():  # checked over all providers, as upstream does
            return qs.none()
        qs = qs.filter(id__in=members.values("id"))
    return querysets.not_member_of(qs, member_of.forbidden)


def narrow_by_resources(qs, resources):
    """`qs` narrowed to providers where each {class name: amount} fits now, alone.

    Raises InvalidQuery for an unknown resource class.
    """
    found = dict(ResourceClass.objects.filter(name__in=list(resources))
                 .values_list("name", "id"))
    for rc_name in resources:
        if rc_name not in found:
            raise exceptions.InvalidQuery("Invalid resource class in resources parameter: "
                                          f"No such resource class {rc_name}.")
    return usage.with_capacity(qs, {found[n]: amount for n, amount in resources.items()})


def is_empty(qs):
    """True when a narrowing step already knows the answer is empty (no query run)."""
    return isinstance(qs, EmptyQuerySet)


def provider_list(*, name=None, uuid=None, in_tree=None, required=None, member_of=None,
                  resources=None):
    """Providers matching every given filter, as representation rows (dicts).

    Args:
        name, uuid: exact matches.
        in_tree: uuid of any provider; restricts to its tree (unknown: empty).
        required: query_params.TraitQuery (the provider's own traits).
        member_of: query_params.AggregateQuery (the provider's own aggregates).
        resources: {class name: amount}; each must fit the provider alone.
    Raises InvalidQuery for unknown trait or resource class names that
    evaluation reaches: the steps run in upstream's order and an empty answer
    stops them (the operator UI's provider filters call the same steps).
    """
    qs = ResourceProvider.objects.all()
    if name is not None:
        qs = qs.filter(name=name)
    if uuid is not None:
        qs = qs.filter(uuid=uuid)
    steps = [(narrow_to_tree, in_tree), (narrow_by_traits, required),
             (narrow_by_aggregates, member_of), (narrow_by_resources, resources)]
    for narrow, value in steps:
        if value:
            qs = narrow(qs, value)
            if is_empty(qs):
                return []
    narrowed = bool(required or member_of or resources)
    return _rows(qs, narrowed)


def inventories_of(provider):
    """{class name: Inventory} of a provider, in class id order (Placement's row order)."""
    return {inv.resource_class.name: inv
            for inv in Inventory.objects.filter(provider=provider).select_related(
                "resource_class").order_by("resource_class_id")}


def aggregate_uuids_of(provider):
    """In aggregate id (creation) order, as Placement's rows come."""
    return list(ProviderAggregate.objects.filter(provider=provider)
                .order_by("aggregate_id").values_list("aggregate__uuid", flat=True))


def traits_of(provider):
    """Trait rows of a provider (name, created_at, updated_at), in trait id (creation)
    order as Placement's rows come, the same on every database."""
    return list(Trait.objects.filter(providers=provider).order_by("id"))
