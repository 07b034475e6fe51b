"""Reads of allocations and usages (allocations.md §2, §6; usages.md)."""
from dataclasses import dataclass
from datetime import timezone as dt_timezone

from django.db import connections
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from django.db.models import (
    BooleanField, Count, ExpressionWrapper, F, FloatField, Q, Sum, Value,
)
from django.db.models.functions import Cast, Coalesce, Floor, NullIf

from allocations.models import UNKNOWN_CONSUMER_TYPE, Allocation, Consumer, ConsumerType
from providers.models import (
    ChangeRecord, Inventory, ProviderAggregate, ProviderTrait, ResourceProvider,
)
from foundation.db_routing import read_alias
from foundation.uuids import canonical_uuid_or_none
from allocations.usage import with_usage
from providers.querysets import capacity_expression
from providers.rules.names import SHARING_TRAIT


@dataclass
class ConsumerAllocationsView:
    """A consumer's allocations grouped by provider (empty when it has none)."""

    allocations: dict  # provider uuid -> {"generation": int, "resources": {rc: used}}
    project_id: str | None = None
    user_id: str | None = None
    generation: int | None = None
    consumer_type: str | None = None
    last_modified: object = None


# A consumer's allocations with what GET /allocations/{c} shows of them, in one
# statement, so that a concurrent DELETE cannot leave rows without their consumer. The
# names come from scalar subqueries on primary keys rather than joins: PostgreSQL plans
# this in a fifth of the time a six-table join takes (0.16 against 0.9 ms), on every
# claim nova makes (it reads the consumer before each PUT).
CONSUMER_ALLOCATIONS_SQL = (
    "SELECT (SELECT uuid FROM resource_providers WHERE id = a.provider_id), "
    "(SELECT generation FROM resource_providers WHERE id = a.provider_id), "
    "(SELECT name FROM resource_classes WHERE id = a.resource_class_id), "
    "a.used, a.created_at, c.generation, "
    "(SELECT external_id FROM projects WHERE id = c.project_id), "
    "(SELECT external_id FROM users WHERE id = c.user_id), "
    "(SELECT name FROM consumer_types WHERE id = c.consumer_type_id) "
    "FROM consumers c JOIN allocations a ON a.consumer_id = c.id "
    "WHERE c.uuid = %s ORDER BY a.id")


def consumer_allocations_get(*, consumer_uuid):
    """Allocations of the consumer with exactly this uuid string (no normalization)."""
    # a replica when the route may read from one, as the ORM's reads would
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(CONSUMER_ALLOCATIONS_SQL, [consumer_uuid])
        rows = cursor.fetchall()
    if not rows:
        return ConsumerAllocationsView(allocations={})
    allocations = {}
    for rp_uuid, rp_generation, rc_name, used, *_ in rows:
        entry = allocations.setdefault(rp_uuid, {"generation": rp_generation, "resources": {}})
        entry["resources"][rc_name] = used
    _, _, _, _, _, generation, project_id, user_id, consumer_type = rows[0]
    return ConsumerAllocationsView(
        allocations=allocations,
        project_id=project_id,
        user_id=user_id,
        generation=generation,
        consumer_type=consumer_type or UNKNOWN_CONSUMER_TYPE,
        last_modified=max(_aware(row[4]) for row in rows),
    )


def _aware(moment):
    """A datetime column read through a cursor, as the ORM gives it: aware, in UTC
    (SQLite and MySQL hand naive ones back; SQLite may hand back its text)."""
    if isinstance(moment, str):
        moment = parse_datetime(moment)
    return timezone.make_aware(moment, dt_timezone.utc) if timezone.is_naive(moment) else moment


def provider_get(*, uuid, missing):
    """The provider row (id, uuid, generation). Raises missing(uuid) when there is none:
    each endpoint words that 404 its own way (allocations.exceptions)."""
    provider = (ResourceProvider.objects.filter(uuid=uuid)
                .values("id", "uuid", "generation").first())
    if provider is None:
        raise missing(uuid)
    return provider


def provider_allocations_list(*, provider_id):
    """({consumer uuid: {"resources": {...}, "consumer_generation": g}}, last_modified)."""
    rows = (Allocation.objects.filter(provider_id=provider_id)
            .values("consumer__uuid", "consumer__generation", "resource_class__name", "used",
                    "created_at")
            .order_by("id"))
    allocations = {}
    last_modified = None
    for row in rows:
        entry = allocations.setdefault(
            row["consumer__uuid"],
            {"resources": {}, "consumer_generation": row["consumer__generation"]})
        entry["resources"][row["resource_class__name"]] = row["used"]
        if last_modified is None or row["created_at"] > last_modified:
            last_modified = row["created_at"]
    return allocations, last_modified


def provider_usages(*, provider_id):
    """{resource class: used} for every class the provider has inventory of, in class id
    order (Placement's row order)."""
    usages = {name: 0 for name in Inventory.objects.filter(provider_id=provider_id)
              .order_by("resource_class_id").values_list("resource_class__name", flat=True)}
    used = (Allocation.objects.filter(provider_id=provider_id)
            .values("resource_class__name").annotate(used=Sum("used")).order_by())
    for row in used:
        if row["resource_class__name"] in usages:
            usages[row["resource_class__name"]] = row["used"]
    return usages


ALL_TYPES = "all"


def usages_totals(*, project_id, user_id=None, consumer_type=None, grouped=False):
    """Usage sums of a project's (and optionally user's) consumers (GET /usages).

    grouped=False (below 1.38): {rc: used}.
    grouped=True (1.38+): {group: {"consumer_count": n, rc: used, ...}} where
    group is the consumer type ("unknown" for untyped consumers); consumer_type
    narrows to one group, "all" makes one group over every consumer and
    "unknown" selects the untyped ones.
    """
    allocations = Allocation.objects.filter(consumer__project__external_id=project_id)
    if user_id is not None:
        allocations = allocations.filter(consumer__user__external_id=user_id)
    if not grouped:
        rows = (allocations.values("resource_class__name").annotate(used=Sum("used"))
                .order_by("resource_class_id"))
        return {row["resource_class__name"]: row["used"] for row in rows}

    if consumer_type == ALL_TYPES:
        group_field = None
    else:
        group_field = "consumer__consumer_type__name"
        if consumer_type == UNKNOWN_CONSUMER_TYPE:
            allocations = allocations.filter(consumer__consumer_type__isnull=True)
        elif consumer_type is not None:
            allocations = allocations.filter(consumer__consumer_type__name=consumer_type)

    def group_of(row):
        if group_field is None:
            return ALL_TYPES
        return row[group_field] or UNKNOWN_CONSUMER_TYPE

    group_by = [group_field] if group_field else []
    usages = {}
    for row in (allocations.values(*group_by, "resource_class__name")
                .annotate(used=Sum("used")).order_by("resource_class_id")):
        usages.setdefault(group_of(row), {})[row["resource_class__name"]] = row["used"]
    if group_by:
        counts = (allocations.values(*group_by)
                  .annotate(consumers=Count("consumer_id", distinct=True)).order_by())
    else:
        counts = [allocations.aggregate(consumers=Count("consumer_id", distinct=True))]
    for row in counts:
        if row["consumers"]:
            usages.setdefault(group_of(row), {})["consumer_count"] = row["consumers"]
    return usages


def inventories_most_used(*, limit):
    """The in-use inventories with the highest used/capacity ratio (one query).

    Each Inventory carries `.used` (SUM of its allocations), with its provider and
    resource class loaded. An inventory with allocations but no capacity left
    (ratio NULL) sorts first.
    """
    cap = capacity_expression()  # computed in the database to sort by it
    return list(with_usage(Inventory.objects)
                .filter(used__gt=0)
                .annotate(ratio=Cast(F("used"), FloatField()) / NullIf(cap, Value(0.0)))
                .select_related("provider", "resource_class")
                .order_by(F("ratio").desc(nulls_first=True), "provider__name",
                          "resource_class__name")[:limit])


def allocation_counts():
    """{"consumers": n, "allocations": n} over the whole database (two queries)."""
    return {"consumers": Consumer.objects.count(), "allocations": Allocation.objects.count()}


def _allocations_matching(filters):
    allocations = Allocation.objects.order_by()
    return allocations.filter(**filters) if filters is not None else allocations.none()


def usage_classes(*, filters):
    """[(id, name)] of the resource classes held by the allocations matching `filters`
    (Allocation filter kwargs, None for none at all), by name; one query."""
    return list(_allocations_matching(filters).values_list(
        "resource_class_id", "resource_class__name").distinct().order_by("resource_class__name"))


def usages_grouped(*, group_by, filters, class_ids, sort=None):
    """Usage sums of the allocations matching `filters`, one row per group of consumers.

    group_by: Allocation lookups (e.g. "consumer__project__external_id"); filters:
    Allocation filter kwargs, or None for no allocation at all; class_ids: the
    resource classes to sum, in column order; sort: None (by the group values, a
    missing one first), or (column, descending) with column "consumers" or an index
    into class_ids, ties by the group values.
    Returns a lazy queryset (slice it for a page; count() counts the groups) of tuples
    (*group values, consumers, *sums), a sum 0 where the group holds none.
    """
    sums = {f"rc_{i}": Coalesce(Sum("used", filter=Q(resource_class_id=rc_id)), 0)
            for i, rc_id in enumerate(class_ids)}
    rows = (_allocations_matching(filters).values(*group_by)
            .annotate(consumers=Count("consumer_id", distinct=True), **sums))
    by_group = [F(key).asc(nulls_first=True) for key in group_by]
    order = by_group
    if sort is not None:
        column, descending = sort
        name = "consumers" if column == "consumers" else f"rc_{column}"
        order = [F(name).desc() if descending else F(name).asc(), *by_group]
    return rows.order_by(*order).values_list(*group_by, "consumers", *sums)


def usages_total(*, filters, class_ids):
    """(consumers, [sum per class of class_ids]) over every allocation matching
    `filters`; one query."""
    total = _allocations_matching(filters).aggregate(
        consumers=Count("consumer_id", distinct=True),
        **{f"rc_{i}": Coalesce(Sum("used", filter=Q(resource_class_id=rc_id)), 0)
           for i, rc_id in enumerate(class_ids)})
    return total["consumers"], [total[f"rc_{i}"] for i in range(len(class_ids))]


def consumer_type_names():
    return list(ConsumerType.objects.order_by("name").values_list("name", flat=True))


# --- the operator UI's consumer pages ----------------------------------------------

def consumer_get(*, uuid):
    """The Consumer with its project, user and type loaded, or None."""
    return (Consumer.objects.select_related("project", "user", "consumer_type")
            .filter(uuid=uuid).first())


def consumer_known(*, uuid):
    """Whether the consumer exists or has a change log history (its page shows either)."""
    return (Consumer.objects.filter(uuid=uuid).exists()
            or ChangeRecord.objects.filter(kind=ChangeRecord.KIND_CONSUMER, entity=uuid).exists())


def consumer_allocation_rows(*, consumer_id):
    """A consumer's Allocations with provider and class loaded, by provider name, class."""
    return list(Allocation.objects.filter(consumer_id=consumer_id)
                .select_related("provider", "resource_class")
                .order_by("provider__name", "resource_class__name"))


def move_targets(*, resource_class_id, exclude_provider_id):
    """The inventories of the class but the source provider's, annotated with `used`
    (allocations.usage.with_usage), lazily: filter with allocations.usage.room_q
    to keep those where an amount fits, order with in_move_order."""
    return with_usage(Inventory.objects.filter(resource_class_id=resource_class_id)
                      .exclude(provider_id=exclude_provider_id))


def in_move_order(targets, *, root_ids):
    """`targets` (move_targets) annotated with `related` (related_q(root_ids), always
    true without root_ids) and ordered: related first, then most whole units left
    (floor(capacity) - used, what reported_capacity leaves where something fits),
    then name."""
    related = (ExpressionWrapper(related_q(root_ids, provider="provider__"),
                                 output_field=BooleanField())
               if root_ids else Value(True))
    return (targets.annotate(related=related,
                             free_room=Floor(capacity_expression()) - F("used"))
            .order_by("-related", "-free_room", "provider__name"))


MOVE_TARGET_COLUMNS = ("provider_id", "provider__uuid", "provider__name",
                       "provider__generation", "provider__root_id",
                       "total", "reserved", "allocation_ratio", "min_unit", "max_unit",
                       "step_size", "used")


def related_q(root_ids, *, provider=""):
    """Q on providers (on Inventory rows with provider="provider__") related to the
    trees `root_ids` (non-empty) for a move: in one of those trees, or linked to them by
    sharing, that is a sharing provider (MISC_SHARES_VIA_AGGREGATE) in an aggregate
    with a provider of those trees, or in a tree with a provider in an aggregate with a
    sharing provider of those trees (whose trees that provider serves). Subqueries: no
    list of ids however many providers a sharing provider serves."""
    sharing = ProviderTrait.objects.filter(trait__name=SHARING_TRAIT).values("provider_id")
    in_trees = ProviderAggregate.objects.filter(provider__root_id__in=root_ids)
    linked = ProviderAggregate.objects.filter(
        Q(aggregate_id__in=in_trees.values("aggregate_id"), provider_id__in=sharing)
        | Q(aggregate_id__in=in_trees.filter(provider_id__in=sharing).values("aggregate_id"))
    ).values("provider_id")
    return (Q(**{f"{provider}root_id__in": root_ids})
            | Q(**{f"{provider}id__in": linked}) | Q(**{f"{provider}root_id__in": linked}))


def provider_related(*, provider_id, root_ids):
    """Whether the provider is related to the trees `root_ids` (related_q); one query."""
    return ResourceProvider.objects.filter(related_q(root_ids), id=provider_id).exists()


def _named_or_uuid(name_or_uuid):
    canonical = canonical_uuid_or_none(name_or_uuid)
    return ResourceProvider.objects.filter(
        **({"uuid": canonical} if canonical else {"name": name_or_uuid}))


def tree_root_id(name_or_uuid):
    """The root id of the tree of the provider with that uuid or name, or None."""
    return _named_or_uuid(name_or_uuid).values_list("root_id", flat=True).first()


def tree_root(name_or_uuid):
    """The root (a ResourceProvider) of the tree of the provider with that uuid or name,
    or None; one query."""
    # uuid and name are each unique: no LIMIT in the subquery, which MariaDB refuses in IN
    return ResourceProvider.objects.filter(
        id__in=_named_or_uuid(name_or_uuid).values("root_id")).first()


def held_root_names(*, consumer_id):
    """Names of the roots of the trees where the consumer holds allocations; one query."""
    return sorted(set(Allocation.objects.filter(consumer_id=consumer_id)
                      .values_list("provider__root__name", flat=True)))


def provider_names(*, ids):
    """{id: name}; one query."""
    return dict(ResourceProvider.objects.filter(id__in=ids).values_list("id", "name"))


def consumer_list(*, filters, query="", root_id=None):
    """Consumers whose allocations match `filters` (Allocation lookups, as
    usages_grouped's), whose uuid contains `query` and (root_id) that hold something in
    that tree, by uuid, with project, user and type loaded (a queryset to paginate)."""
    consumers = Consumer.objects.select_related("project", "user", "consumer_type")
    allocation_filters = {key.removeprefix("consumer__"): value
                          for key, value in (filters or {}).items()}
    consumers = consumers.filter(**allocation_filters)
    if query:
        consumers = consumers.filter(uuid__icontains=query)
    if root_id is not None:
        consumers = consumers.filter(id__in=Allocation.objects.filter(
            provider__root_id=root_id).values("consumer_id"))
    return consumers.order_by("uuid")


def consumer_holdings(*, consumer_ids):
    """{consumer id: [(provider name, provider uuid, class, used)]} (one query)."""
    holdings = {}
    for row in (Allocation.objects.filter(consumer_id__in=consumer_ids)
                .order_by("provider__name", "resource_class__name")
                .values_list("consumer_id", "provider__name", "provider__uuid",
                             "resource_class__name", "used")):
        holdings.setdefault(row[0], []).append(row[1:])
    return holdings
