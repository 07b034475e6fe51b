"""Test data builders that go through the services, as the API does.

make_provider, make_consumer and allocate call the same services as the API
(provider_create, inventories_replace, provider_traits_replace,
aggregates_replace, allocations_replace), generation-checked, so a test cannot
set up data a service would refuse: a bad inventory raises the service's
domain error here, and an over-capacity allocation raises CapacityExceeded
(lower the inventory afterwards with set_inventory, as Placement allows).
Generations are what the services make them (each inventory, trait,
aggregate and allocation write bumps the provider's).

The escape hatch: `unchecked=True` (make_consumer, allocate) writes the rows
straight through the models, for tests that need data the services refuse on
purpose (an allocation without inventory, a consumer without allocations: the
damage placement_status looks for). Say why at the call site.
"""
import uuid as uuidlib

from allocations import selectors as allocation_selectors
from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from allocations.services import ConsumerAllocations, allocations_replace
from providers.models import ResourceClass
from providers.rules.names import is_valid_custom_name
from providers.services.aggregates import aggregates_replace
from providers.services.inventories import inventories_replace
from providers.services.provider_traits import provider_traits_replace
from providers.services.providers import provider_create
from providers.services.resource_classes import resource_class_ensure
from providers.services.traits import trait_ensure


def make_provider(name, parent=None, inventory=None, traits=(), aggregates=(), uuid=None):
    """A provider (child of `parent`) with inventory {"VCPU": 8 or {"total": 8, ...}}.

    Custom classes and traits are created first, as a client would (PUT
    /resource_classes/CUSTOM_X, PUT /traits/CUSTOM_X); standard ones must exist.
    """
    provider = provider_create(name=name, uuid=uuid,
                               parent_uuid=parent.uuid if parent is not None else None)
    if parent is not None:
        # The service moved the parent's nested-set bounds in the database; keep the
        # caller's copy current (its get_children() and friends read them).
        parent.refresh_from_db(fields=["lft", "rght", "tree_id", "level"])
    if inventory:
        set_inventory(provider, inventory)
    if traits:
        _ensure_custom(trait_ensure, traits)
        provider_traits_replace(provider=provider, trait_names=traits,
                                generation=provider.generation)
    if aggregates:
        aggregates_replace(provider=provider, aggregate_uuids=aggregates,
                           generation=provider.generation)
    return provider


def set_inventory(provider, inventory):
    """Replace `provider`'s inventory, as PUT .../inventories does (generation-checked).

    Placement lets an inventory be lowered below what is allocated: this is how a
    test gets usage over capacity without going around the services.
    """
    _ensure_custom(resource_class_ensure, inventory)
    inventories_replace(
        provider=provider, generation=provider.generation,
        inventories={rc_name: spec if isinstance(spec, dict) else {"total": spec}
                     for rc_name, spec in inventory.items()})


def _ensure_custom(ensure, names):
    for name in names:
        if is_valid_custom_name(name):
            ensure(name=name)


def make_consumer(uuid=None, project="project", user="user", consumer_type=None,
                  unchecked=False):
    """A consumer, saved by its first allocate() (a consumer exists iff it holds something).

    Until then it is an unsaved Consumer carrying its uuid, project, user and
    type. unchecked=True saves it at once, without allocations (generation 1).
    """
    consumer = Consumer(
        uuid=uuid or str(uuidlib.uuid4()),
        project=Project(external_id=project),
        user=User(external_id=user),
        consumer_type=ConsumerType(name=consumer_type) if consumer_type else None,
    )
    if unchecked:
        _save_raw(consumer)
    return consumer


def allocate(consumer, provider, unchecked=False, **amounts):
    """allocate(consumer, rp, VCPU=2, MEMORY_MB=512): add to what the consumer holds.

    One generation-checked allocation write of the consumer's whole set (see
    allocate_across). unchecked=True instead inserts the Allocation rows as they
    are (no capacity, inventory or min_unit/step_size check, no generation change).
    """
    if unchecked:
        _allocate_raw(consumer, provider, amounts)
        return
    allocate_across(consumer, {provider: amounts})


def allocate_across(consumer, amounts):
    """allocate_across(vm, {numa0: {"VCPU": 2}, cn: {"MEMORY_MB": 512}}): one write.

    Adds to what the consumer holds, as a client's GET then PUT
    /allocations/{consumer} with the consumer generation it read: one
    allocations_replace(), which bumps every provider of the consumer's set.
    Afterwards `consumer` is the saved row and each provider's generation is current.
    """
    current = allocation_selectors.consumer_allocations_get(consumer_uuid=consumer.uuid)
    wanted = {rp_uuid: dict(entry["resources"])
              for rp_uuid, entry in current.allocations.items()}
    for provider, resources in amounts.items():
        wanted.setdefault(provider.uuid, {}).update(resources)
    allocations_replace(consumers=[ConsumerAllocations(
        consumer_uuid=consumer.uuid,
        project_id=consumer.project.external_id,
        user_id=consumer.user.external_id,
        allocations=wanted,
        consumer_type=consumer.consumer_type.name if consumer.consumer_type else None,
        generation=current.generation,
    )])
    consumer.pk = Consumer.objects.values_list("pk", flat=True).get(uuid=consumer.uuid)
    consumer._state.adding = False
    consumer.refresh_from_db()
    for provider in amounts:
        provider.refresh_from_db(fields=["generation", "updated_at"])


def _save_raw(consumer):
    """Save an unsaved make_consumer() stand-in straight through the models."""
    consumer.project = Project.objects.get_or_create(
        external_id=consumer.project.external_id)[0]
    consumer.user = User.objects.get_or_create(external_id=consumer.user.external_id)[0]
    if consumer.consumer_type is not None:
        consumer.consumer_type = ConsumerType.objects.get_or_create(
            name=consumer.consumer_type.name)[0]
    consumer.generation = 1
    consumer.save()


def _allocate_raw(consumer, provider, amounts):
    if consumer.pk is None:
        _save_raw(consumer)
    for rc_name, used in amounts.items():
        Allocation.objects.create(
            consumer=consumer, provider=provider,
            resource_class=ResourceClass.objects.get_or_create(name=rc_name)[0], used=used)
