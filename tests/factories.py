"""Plain functions that build test data straight through the models.

They bypass the API on purpose (fast set-up for engine and service tests);
API tests create what they test through the API.
"""
import uuid as uuidlib

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from providers.models import (
    Aggregate,
    Inventory,
    ProviderAggregate,
    ProviderTrait,
    ResourceClass,
    ResourceProvider,
    Trait,
)


def _rc(name):
    return ResourceClass.objects.get_or_create(name=name)[0]


def make_provider(name, parent=None, inventory=None, traits=(), aggregates=(), uuid=None):
    """A provider (child of `parent`) with inventory {"VCPU": 8 or {"total": 8, ...}}."""
    provider = ResourceProvider.objects.create(
        uuid=uuid or str(uuidlib.uuid4()), name=name, parent=parent)
    provider.root_id = parent.root_id if parent is not None else provider.id
    provider.save(update_fields=["root"])
    for rc_name, spec in (inventory or {}).items():
        fields = spec if isinstance(spec, dict) else {"total": spec}
        Inventory.objects.create(provider=provider, resource_class=_rc(rc_name), **fields)
    for trait in traits:
        ProviderTrait.objects.create(
            provider=provider, trait=Trait.objects.get_or_create(name=trait)[0])
    for agg in aggregates:
        ProviderAggregate.objects.create(
            provider=provider, aggregate=Aggregate.objects.get_or_create(uuid=agg)[0])
    return provider


def make_consumer(uuid=None, project="project", user="user", consumer_type=None):
    return Consumer.objects.create(
        uuid=uuid or str(uuidlib.uuid4()),
        project=Project.objects.get_or_create(external_id=project)[0],
        user=User.objects.get_or_create(external_id=user)[0],
        consumer_type=(ConsumerType.objects.get_or_create(name=consumer_type)[0]
                       if consumer_type else None),
        generation=1,
    )


def allocate(consumer, provider, **amounts):
    """allocate(consumer, rp, VCPU=2, MEMORY_MB=512)."""
    for rc_name, used in amounts.items():
        Allocation.objects.create(
            consumer=consumer, provider=provider, resource_class=_rc(rc_name), used=used)
