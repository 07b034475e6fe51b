"""Resource providers, their trees, inventories, traits and aggregates.

Rows are written only through providers.services; the constraints here are
the safety net behind the rules the services enforce.
"""
from django.db import models
from mptt.models import MPTTModel, TreeForeignKey

from providers import rules

class ResourceClass(models.Model):
    """A countable kind of resource: a standard name or a CUSTOM_* one."""

    name = models.CharField(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "resource_classes"
        ordering = ["id"]
        verbose_name_plural = "resource classes"

    def __str__(self):
        return self.name

    @property
    def is_custom(self):
        return rules.is_custom(self.name)


class Trait(models.Model):
    """A qualitative marker for providers: a standard name or a CUSTOM_* one."""

    name = models.CharField(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "traits"
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def is_custom(self):
        return rules.is_custom(self.name)


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
        indexes = [models.Index(fields=["root"], name="rp_root_idx")]

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


class Inventory(models.Model):
    """How much of one resource class a provider has, and how it may be used."""

    provider = models.ForeignKey(
        ResourceProvider, on_delete=models.CASCADE, related_name="inventories"
    )
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.PROTECT, related_name="inventories"
    )
    total = models.IntegerField()
    reserved = models.IntegerField(default=0)
    min_unit = models.IntegerField(default=1)
    max_unit = models.IntegerField(default=2147483647)
    step_size = models.IntegerField(default=1)
    allocation_ratio = models.FloatField(default=1.0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "inventories"
        verbose_name_plural = "inventories"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "resource_class"], name="uniq_inventory_provider_class"
            )
        ]
        indexes = [
            models.Index(fields=["resource_class", "provider"], name="inv_rc_rp_idx")
        ]

    def __str__(self):
        return f"{self.resource_class_id}@{self.provider_id}: {self.total}"

    @property
    def capacity(self):
        return rules.capacity(self.total, self.reserved, self.allocation_ratio)
