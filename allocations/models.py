"""Consumers and what they hold.

Projects, users and consumer types are created on first use by allocation
writes; a consumer left without allocations is deleted (allocations.services).
"""
from django.db import models

from providers.models import ResourceClass, ResourceProvider
from providers.rules import MAX_NAME_LENGTH

UNKNOWN_CONSUMER_TYPE = "unknown"


class ExternalIdentity(models.Model):
    """A Keystone project or user, known here only by its external id."""

    external_id = models.CharField(max_length=255, unique=True)

    class Meta:
        abstract = True

    def __str__(self):
        return self.external_id


class Project(ExternalIdentity):
    class Meta:
        db_table = "projects"


class User(ExternalIdentity):
    class Meta:
        db_table = "users"
        # not "users": the admin index lists Django's logins as Users too
        verbose_name = "Placement user"
        verbose_name_plural = "Placement users"


class ConsumerType(models.Model):
    name = models.CharField(max_length=MAX_NAME_LENGTH, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "consumer_types"

    def __str__(self):
        return self.name


class Consumer(models.Model):
    """The holder of allocations (an instance, a migration, a port ...)."""

    uuid = models.CharField(max_length=36, unique=True)
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="consumers")
    user = models.ForeignKey(User, on_delete=models.PROTECT, related_name="consumers")
    consumer_type = models.ForeignKey(
        ConsumerType, null=True, blank=True, on_delete=models.PROTECT, related_name="consumers"
    )
    generation = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "consumers"
        indexes = [
            models.Index(fields=["project", "user"], name="consumer_project_user_idx"),
        ]

    def __str__(self):
        return self.uuid

    @property
    def consumer_type_name(self):
        return self.consumer_type.name if self.consumer_type_id else UNKNOWN_CONSUMER_TYPE


class Allocation(models.Model):
    """`used` units of one class that one consumer holds on one provider."""

    provider = models.ForeignKey(
        ResourceProvider, on_delete=models.PROTECT, related_name="allocations"
    )
    consumer = models.ForeignKey(Consumer, on_delete=models.CASCADE, related_name="allocations")
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.PROTECT, related_name="allocations"
    )
    used = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "allocations"
        constraints = [
            models.UniqueConstraint(
                fields=["consumer", "provider", "resource_class"], name="uniq_allocation"
            ),
            # The last net: every API schema asks amounts >= 1 (amount 0 is never stored).
            models.CheckConstraint(condition=models.Q(used__gte=1),
                                   name="allocation_used_positive"),
        ]
        indexes = [
            # usage sums: WHERE provider_id = ? [AND resource_class_id = ?]
            models.Index(fields=["provider", "resource_class", "used"], name="alloc_rp_rc_idx"),
            models.Index(fields=["resource_class", "provider", "used"], name="alloc_rc_rp_idx"),
        ]

    def __str__(self):
        # Shown in admin refusals and inlines: names an operator can act on, not row ids.
        return (f"{self.resource_class.name}={self.used} on {self.provider.name} "
                f"for consumer {self.consumer.uuid}")
