"""The operator's edits of one consumer's allocations (the UI's consumer page).

Each is one allocations_replace() of the consumer's whole allocation set, checked
against the consumer and provider generations the operator saw, so a concurrent
change is a conflict, not a silent overwrite; the write's own checks (capacity,
constraints, inventory) apply as they do to the API's writes.
"""
from allocations import exceptions, selectors, tree_moves
from allocations.models import Consumer
from allocations.services import ConsumerAllocations, allocations_replace
from providers.models import ResourceProvider


def allocation_move(*, consumer_uuid, resource_class, source_uuid, target_uuid,
                    consumer_generation, source_generation, target_generation):
    """Move a consumer's allocation of one class from one provider to another.

    One allocations_replace() of the consumer's whole allocation set: the class
    leaves `source_uuid` and is added to `target_uuid` (summed with what the
    consumer may already hold there); project, user and type are kept. Checked
    against the consumer generation and both provider generations the caller
    saw, so a concurrent change is a conflict, not a silent overwrite; the target
    must have inventory of the class and room for the amount (the write's own
    capacity checks). Returns the amount moved.
    Raises ConsumerAllocationsNotFound, AllocationNotHeld, MoveToSameProvider,
    ConsumerGenerationConflict, ProviderGenerationMismatch, ProviderDoesNotExist,
    InvalidInventory, InvalidAllocationConstraints, CapacityExceeded,
    AllocationWriteConflict.
    """
    current, wanted, amount = _without_one(consumer_uuid, source_uuid, resource_class)
    if target_uuid == source_uuid:
        raise exceptions.MoveToSameProvider(source_uuid, resource_class)
    on_target = wanted.setdefault(target_uuid, {})
    on_target[resource_class] = on_target.get(resource_class, 0) + amount
    _replace_checked(consumer_uuid, current, wanted, consumer_generation,
                     {source_uuid: source_generation, target_uuid: target_generation})
    return amount


def allocation_remove(*, consumer_uuid, resource_class, provider_uuid, consumer_generation,
                      provider_generation):
    """Remove one of a consumer's allocations (one class on one provider), keeping the
    others; the consumer goes with its last one, as with an empty PUT.

    One allocations_replace() of the consumer's remaining set, checked against the
    consumer and provider generations the caller saw. Returns the amount removed.
    Raises ConsumerAllocationsNotFound, AllocationNotHeld, ConsumerGenerationConflict,
    ProviderGenerationMismatch, AllocationWriteConflict.
    """
    current, wanted, amount = _without_one(consumer_uuid, provider_uuid, resource_class)
    _replace_checked(consumer_uuid, current, wanted, consumer_generation,
                     {provider_uuid: provider_generation})
    return amount


def consumer_move_tree(*, consumer_uuid, source_root_uuid, target_root_uuid,
                       consumer_generation, provider_generations):
    """Move everything the consumer holds in the tree of `source_root_uuid` into the tree
    of `target_root_uuid`, in one write (allocations.tree_moves.plan_tree_move places
    each allocation); its allocations elsewhere (a sharing provider's) stay. Either may
    name any provider of its tree: the move is between the trees.

    One allocations_replace() checked against the consumer generation and
    `provider_generations` ({uuid: generation} the caller saw: the source tree's
    providers and the target tree's), so the plan written is the plan shown.
    Returns the TreePlan written. Raises NoSuchHost (no such provider),
    ConsumerAllocationsNotFound (the consumer holds nothing at all), NothingHeldInTree
    (nothing in the source tree, something elsewhere), TreeMoveToSameTree,
    TreeMoveDoesNotFit, and the write's errors (ConsumerGenerationConflict,
    ProviderGenerationMismatch, CapacityExceeded …).
    """
    source_id, source_uuid = _tree_root(source_root_uuid)
    target_id, target_uuid = _tree_root(target_root_uuid)
    if source_id == target_id:
        raise exceptions.TreeMoveToSameTree(source_uuid)
    consumer = selectors.consumer_get(uuid=consumer_uuid)
    if consumer is None:
        raise exceptions.ConsumerAllocationsNotFound(consumer_uuid)
    held = tree_moves.held_in_tree(consumer_id=consumer.id, root_id=source_id)
    if not held:
        raise exceptions.NothingHeldInTree(consumer_uuid, source_uuid)
    inventories = tree_moves.tree_inventories(
        root_ids=[target_id], classes={h.resource_class for h in held})
    plan = tree_moves.plan_tree_move(held, inventories.get(target_id, []))
    if not plan.fits:
        raise exceptions.TreeMoveDoesNotFit(target_uuid, plan.reasons)
    current = selectors.consumer_allocations_get(consumer_uuid=consumer_uuid)
    moving = {h.provider_uuid for h in held}
    wanted = {rp_uuid: dict(entry["resources"])
              for rp_uuid, entry in current.allocations.items() if rp_uuid not in moving}
    for rp_uuid, resources in plan.allocations().items():
        on_target = wanted.setdefault(rp_uuid, {})
        for rc, amount in resources.items():
            on_target[rc] = on_target.get(rc, 0) + amount
    _replace_checked(consumer_uuid, current, wanted, consumer_generation, provider_generations)
    return plan


def _tree_root(provider_uuid):
    """(id, uuid) of the root of the tree of the provider `provider_uuid`; NoSuchHost."""
    found = (ResourceProvider.objects.filter(uuid=provider_uuid)
             .values_list("root_id", "root__uuid").first())
    if found is None:
        raise exceptions.NoSuchHost(provider_uuid)
    return found


def allocation_add(*, consumer_uuid, provider_uuid, resource_class, amount,
                   consumer_generation, provider_generation=None):
    """Add `amount` of `resource_class` on `provider_uuid` to an existing consumer's
    allocations (summed with what it may hold there already), the others kept.

    One allocations_replace() checked against the consumer generation the caller saw
    (and the provider's, when given); the write's own checks apply (inventory, capacity,
    min/max unit, step). Raises ConsumerAllocationsNotFound and the write's errors.
    """
    current = selectors.consumer_allocations_get(consumer_uuid=consumer_uuid)
    if not current.allocations:
        raise exceptions.ConsumerAllocationsNotFound(consumer_uuid)
    wanted = {rp_uuid: dict(entry["resources"])
              for rp_uuid, entry in current.allocations.items()}
    on_provider = wanted.setdefault(provider_uuid, {})
    on_provider[resource_class] = on_provider.get(resource_class, 0) + amount
    generations = {} if provider_generation is None else {provider_uuid: provider_generation}
    _replace_checked(consumer_uuid, current, wanted, consumer_generation, generations)


def _without_one(consumer_uuid, provider_uuid, resource_class):
    """(the consumer's allocations as read now, its allocation set without `resource_class`
    on `provider_uuid`, the amount taken off). The write that follows is checked against
    the generations the caller saw, so reading now is safe."""
    current = selectors.consumer_allocations_get(consumer_uuid=consumer_uuid)
    if not current.allocations:
        raise exceptions.ConsumerAllocationsNotFound(consumer_uuid)
    wanted = {rp_uuid: dict(entry["resources"])
              for rp_uuid, entry in current.allocations.items()}
    amount = wanted.get(provider_uuid, {}).pop(resource_class, None)
    if amount is None:
        raise exceptions.AllocationNotHeld(consumer_uuid, provider_uuid, resource_class)
    if not wanted[provider_uuid]:
        del wanted[provider_uuid]
    return current, wanted, amount


def _replace_checked(consumer_uuid, current, wanted, consumer_generation,
                     provider_generations):
    """The consumer's allocations become `wanted` (project and user kept), refused unless
    the consumer and the providers are still at the generations the caller saw."""
    allocations_replace(
        consumers=[ConsumerAllocations(
            consumer_uuid=consumer_uuid, project_id=current.project_id,
            user_id=current.user_id, allocations=wanted, consumer_type=None,
            generation=consumer_generation)],
        provider_generations=provider_generations)


def consumer_allocations_remove(*, consumer_uuid, generation):
    """Remove all of a consumer's allocations (and the consumer), generation-checked.

    Unlike allocations_delete() (DELETE /allocations/{c}, unchecked) this is an
    allocations_replace() with an empty set and the generation the caller saw.
    Raises ConsumerAllocationsNotFound, ConsumerGenerationConflict,
    AllocationWriteConflict.
    """
    consumer = (Consumer.objects.filter(uuid=consumer_uuid)
                .values("project__external_id", "user__external_id").first())
    if consumer is None:
        raise exceptions.ConsumerAllocationsNotFound(consumer_uuid)
    allocations_replace(consumers=[ConsumerAllocations(
        consumer_uuid=consumer_uuid, project_id=consumer["project__external_id"],
        user_id=consumer["user__external_id"], allocations={}, generation=generation)])
