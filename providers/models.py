"""Resource providers, their trees, inventories, traits and aggregates.

Rows are written only through providers.services; the constraints here are
the safety net behind the rules the services enforce.
"""
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from mptt.models import MPTTModel, TreeForeignKey

from providers import rules

class CatalogueName(models.Model):
    """A name of the catalogue: a standard one or a CUSTOM_* one (resource classes, traits)."""

    name = models.CharField(max_length=rules.MAX_NAME_LENGTH, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    def __str__(self):
        return self.name

    @property
    def is_custom(self):
        return rules.is_custom(self.name)


class ResourceClass(CatalogueName):
    """A countable kind of resource."""

    class Meta:
        db_table = "resource_classes"
        ordering = ["id"]
        verbose_name_plural = "resource classes"


class Trait(CatalogueName):
    """A qualitative marker for providers."""

    class Meta:
        db_table = "traits"
        ordering = ["name"]


class Aggregate(models.Model):
    """A grouping of providers known only by its uuid."""

    uuid = models.CharField(max_length=36, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "placement_aggregates"

    def __str__(self):
        return self.uuid


class ResourceProvider(MPTTModel):
    """A node of a provider tree.

    `parent` is the MPTT tree link; `root` duplicates the tree's root as a
    plain foreign key so SQL can join on it (a root points at itself).
    Both are set only by providers.services, which lock tree writes.
    """

    uuid = models.CharField(max_length=36, unique=True)
    name = models.CharField(max_length=200, unique=True)
    generation = models.IntegerField(default=0)
    parent = TreeForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    root = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.DO_NOTHING,
        related_name="+", db_constraint=False,
    )
    traits = models.ManyToManyField(Trait, through="ProviderTrait", related_name="providers")
    aggregates = models.ManyToManyField(
        Aggregate, through="ProviderAggregate", related_name="providers"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class MPTTMeta:
        parent_attr = "parent"

    class Meta:
        db_table = "resource_providers"
        # `root`, a foreign key, has its index already (a second one, dropped in 0005,
        # was never used; tests/providers/test_indexes.py).

    def __str__(self):
        return f"{self.name} ({self.uuid})"


class ProviderTrait(models.Model):
    provider = models.ForeignKey(ResourceProvider, on_delete=models.CASCADE)
    trait = models.ForeignKey(Trait, on_delete=models.PROTECT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "resource_provider_traits"
        constraints = [
            models.UniqueConstraint(fields=["provider", "trait"], name="uniq_provider_trait")
        ]
        indexes = [models.Index(fields=["trait", "provider"], name="rpt_trait_rp_idx")]


class ProviderAggregate(models.Model):
    provider = models.ForeignKey(ResourceProvider, on_delete=models.CASCADE)
    aggregate = models.ForeignKey(Aggregate, on_delete=models.CASCADE)

    class Meta:
        db_table = "resource_provider_aggregates"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "aggregate"], name="uniq_provider_aggregate"
            )
        ]
        indexes = [models.Index(fields=["aggregate", "provider"], name="rpa_agg_rp_idx")]


def _inventory_integer(field):
    """An inventory integer field with its range and default from providers.rules."""
    smallest, largest = rules.INTEGER_BOUNDS[field]
    default = rules.INVENTORY_DEFAULTS.get(field)
    extra = {} if default is None else {"default": default}
    return models.IntegerField(
        validators=[MinValueValidator(smallest), MaxValueValidator(largest)], **extra)


def _inventory_constraints():
    """The last net under the services: each field's range (providers.rules), which no
    Placement API request can break. Capacity (reserved vs total) is not among them:
    the reshaper and microversion 1.26+ store records the capacity rule of older
    microversions refuses, and allocation_ratio has no lower bound (inventories.md)."""
    ranges = [
        models.CheckConstraint(
            condition=models.Q(**{f"{field}__gte": smallest, f"{field}__lte": largest}),
            name=f"inventory_{field}_range")
        for field, (smallest, largest) in rules.INTEGER_BOUNDS.items()]
    return [*ranges, models.CheckConstraint(
        condition=models.Q(allocation_ratio__lte=rules.MAX_ALLOCATION_RATIO),
        name="inventory_allocation_ratio_max")]


class Inventory(models.Model):
    """How much of one resource class a provider has, and how it may be used.

    The field ranges are providers.rules' (validators for the admin, database
    constraints as the last net); clean() adds the capacity rule.
    """

    provider = models.ForeignKey(
        ResourceProvider, on_delete=models.CASCADE, related_name="inventories"
    )
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.PROTECT, related_name="inventories"
    )
    total = _inventory_integer("total")
    reserved = _inventory_integer("reserved")
    min_unit = _inventory_integer("min_unit")
    max_unit = _inventory_integer("max_unit")
    step_size = _inventory_integer("step_size")
    allocation_ratio = models.FloatField(
        default=rules.INVENTORY_DEFAULTS["allocation_ratio"],
        validators=[MaxValueValidator(rules.MAX_ALLOCATION_RATIO)])
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "inventories"
        verbose_name_plural = "inventories"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "resource_class"], name="uniq_inventory_provider_class"
            ),
            *_inventory_constraints(),
        ]
        indexes = [
            models.Index(fields=["resource_class", "provider"], name="inv_rc_rp_idx")
        ]

    def __str__(self):
        return f"{self.resource_class_id}@{self.provider_id}: {self.total}"

    @property
    def capacity(self):
        return rules.capacity(self.total, self.reserved, self.allocation_ratio)

    def clean(self):
        """The services' rules for the admin: field ranges, then capacity >= 0 (the
        rule of the latest microversion)."""
        values = {field: getattr(self, field) for field in rules.INVENTORY_FIELDS}
        problems = rules.field_problems(values)
        if problems:
            raise ValidationError(problems)
        if self.provider_id is None or self.resource_class_id is None:
            return
        message = rules.inventory_capacity_error(
            self.resource_class.name, self.provider.uuid, rules.with_defaults(values))
        if message:
            raise ValidationError({"reserved": message})


class ChangeRecord(models.Model):
    """One entry of the change log: who changed what, when, before -> after.

    Written only by providers.services.change_log (one INSERT per write, inside
    the write's transaction); read by the operator UI per provider and per
    consumer. `entity` is a provider's or consumer's uuid, or a resource class's
    or trait's name. `before` / `after` hold what the service had read and
    written (None for a create / delete); their keys depend on `action`.
    `actor` is the API caller's user id (with `project_id`), `ui:<login>`,
    `admin:<login>`, `command:<name>` or `system` (foundation.actor).
    """

    KIND_PROVIDER = "provider"
    KIND_CONSUMER = "consumer"
    KIND_RESOURCE_CLASS = "resource_class"
    KIND_TRAIT = "trait"
    KIND_DATABASE = "database"
    KINDS = [(KIND_PROVIDER, "provider"), (KIND_CONSUMER, "consumer"),
             (KIND_RESOURCE_CLASS, "resource class"), (KIND_TRAIT, "trait"),
             (KIND_DATABASE, "database")]

    kind = models.CharField(max_length=20, choices=KINDS)
    entity = models.CharField(max_length=255)
    action = models.CharField(max_length=40)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    actor = models.CharField(max_length=255)
    project_id = models.CharField(max_length=255, blank=True, default="")
    request_id = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField()

    class Meta:
        db_table = "change_records"
        indexes = [
            # one entity's history, newest first (the UI pages)
            models.Index(fields=["kind", "entity", "created_at"], name="change_entity_time_idx"),
            # retention: DELETE ... WHERE created_at < cutoff
            models.Index(fields=["created_at"], name="change_time_idx"),
        ]

    def __str__(self):
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.kind} {self.entity}"
