"""Where one allocation of a consumer could move: the move picker of the consumer page.

Every provider with inventory of the class is looked at (one query, whatever the size
of the cloud); a target *fits* when allocations.rules.move_refusal, the write's own
tests, has nothing against it, so the picker offers only moves the write accepts
(barring a concurrent change). A target is *related* when it is in a tree where the
consumer holds something else, or sharing links it to such a tree (it is a sharing
provider serving the tree, or its tree is served by a sharing provider the consumer
holds on); moving into an unrelated tree splits the consumer's resources across trees
(a sharing provider's DISK_GB onto another host's tree, say), so the page asks to
confirm.
"""
from dataclasses import dataclass

from allocations import rules, selectors
from providers.rules import reported_capacity

PER_PAGE = 25


@dataclass
class Target:
    id: int
    uuid: str
    name: str
    generation: int
    root_id: int
    capacity: int
    used: int
    free: int
    related: bool
    refusal: tuple = None   # (kind, message) from rules.move_refusal, None if it fits
    root_name: str = ""     # the tree's root, when not the provider itself (name_roots)


@dataclass
class MoveChoice:
    fitting: list      # Targets that fit: related first, then most free room, then name
    refused: list      # Targets matching the search that do not fit (empty without one)
    with_inventory: int   # providers (but the source) with inventory of the class
    related_roots: list   # names of the trees where the consumer holds something else


def move_choice(*, allocation, held, query=""):
    """The targets for `allocation` (an Allocation with provider and resource class
    loaded) of a consumer whose allocations are `held` (Allocations, provider loaded);
    `query`: a part of the provider name (case-insensitive). A constant number of
    queries (four)."""
    others = [a for a in held if a.id != allocation.id]
    roots = {a.provider.root_id for a in others}
    linked = selectors.sharing_relatives(root_ids=roots) if roots else set()
    holding = {a.provider_id: a.used for a in others
               if a.resource_class_id == allocation.resource_class_id}
    needle = query.strip().lower()
    fitting, refused, count = [], [], 0
    for (rp_id, uuid, name, generation, root_id, total, reserved, ratio, min_unit, max_unit,
         step, used) in selectors.move_target_rows(
            resource_class_id=allocation.resource_class_id,
            exclude_provider_id=allocation.provider_id):
        count += 1
        if needle and needle not in name.lower():
            continue
        limits = rules.InventoryLimits(total, reserved, min_unit, max_unit, step, ratio)
        capacity = reported_capacity(total, reserved, ratio)
        target = Target(rp_id, uuid, name, generation, root_id, capacity, used,
                        max(capacity - used, 0),
                        related=_related(roots, linked, rp_id, root_id),
                        refusal=rules.move_refusal(allocation.used, holding.get(rp_id, 0),
                                                   used, limits))
        (refused if target.refusal else fitting).append(target)
    fitting.sort(key=lambda t: (not t.related, -t.free, t.name))
    names = selectors.provider_names(ids=roots) if roots else {}
    return MoveChoice(fitting=fitting, refused=refused if needle else [], with_inventory=count,
                      related_roots=sorted(names.values()))


def name_roots(targets):
    """Set root_name on the targets below a root; one query."""
    below = [t for t in targets if t.root_id != t.id]
    names = selectors.provider_names(ids={t.root_id for t in below}) if below else {}
    for target in below:
        target.root_name = names.get(target.root_id, "")


def _related(roots, linked, rp_id, root_id):
    return not roots or root_id in roots or rp_id in linked or root_id in linked


def is_related(*, allocation, held, target_root_id, target_id):
    """Whether a target (its id and root id) is related to the consumer's other
    allocations (see the module docstring); at most two queries."""
    roots = {a.provider.root_id for a in held if a.id != allocation.id}
    linked = selectors.sharing_relatives(root_ids=roots) if roots else set()
    return _related(roots, linked, target_id, target_root_id)
