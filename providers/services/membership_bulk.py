"""Traits added or removed, or aggregates joined or left, across many providers.

The operator UI's bulk edit of traits and aggregates (/ui/bulk/traits-aggregates/)
previews a change (membership_preview) and applies it here, provider by provider: each
is its own provider_traits_replace() (PUT .../traits) or aggregates_replace() (PUT
.../aggregates) with the generation its preview row was computed with. A provider
changed since the preview is a conflict and is left alone; the others are written.
One batch changes traits or aggregates, never both: each provider gets one change log
entry, and the batch (one request id) is reverted entry by entry
(membership_batch_revert).
"""
from dataclasses import dataclass, field

from providers import exceptions
from providers.models import ProviderAggregate, ProviderTrait, ResourceProvider
from providers.services.aggregates import aggregates_replace
from providers.services.inventory_bulk import outcome_of
from providers.services.provider_traits import provider_traits_replace
from providers.services.reverts import batch_entries

TRAITS, AGGREGATES = "traits", "aggregates"
MEMBERSHIP_ACTIONS = (TRAITS, AGGREGATES)


@dataclass(frozen=True)
class MembershipChange:
    """What to add to and remove from each provider's set of `kind` (TRAITS: trait
    names; AGGREGATES: aggregate uuids)."""

    kind: str
    add: tuple = ()
    remove: tuple = ()

    def applied_to(self, current):
        """The set `current` becomes (a sorted list)."""
        return sorted((set(current) | set(self.add)) - set(self.remove))


@dataclass
class MembershipRow:
    """One provider's set before and after the change, and the generation it was read at."""

    provider_uuid: str
    provider_name: str
    generation: int
    before: list
    after: list
    added: list = field(default_factory=list)
    removed: list = field(default_factory=list)

    @property
    def changed(self):
        return self.before != self.after

    @property
    def target(self):
        """What the apply form posts for this row: "<uuid>:<generation>"."""
        return f"{self.provider_uuid}:{self.generation}"


def current_sets(kind, provider_ids):
    """{provider id: sorted [trait name or aggregate uuid]} of the providers (one query)."""
    if kind == TRAITS:
        pairs = ProviderTrait.objects.filter(provider_id__in=provider_ids).values_list(
            "provider_id", "trait__name")
    else:
        pairs = ProviderAggregate.objects.filter(provider_id__in=provider_ids).values_list(
            "provider_id", "aggregate__uuid")
    sets = {pk: [] for pk in provider_ids}
    for pk, value in pairs:
        sets[pk].append(value)
    return {pk: sorted(values) for pk, values in sets.items()}


def membership_preview(*, providers, change):
    """[MembershipRow] of `providers` (a queryset), by name: before -> after. Two queries."""
    rows = list(providers.order_by("name").values_list("id", "uuid", "name", "generation"))
    sets = current_sets(change.kind, [row[0] for row in rows])
    preview = []
    for pk, uuid, name, generation in rows:
        before = sets[pk]
        after = change.applied_to(before)
        preview.append(MembershipRow(uuid, name, generation, before, after,
                                     added=sorted(set(after) - set(before)),
                                     removed=sorted(set(before) - set(after))))
    return preview


def _write(kind, provider, wanted, generation):
    if kind == TRAITS:
        provider_traits_replace(provider=provider, trait_names=wanted, generation=generation)
    else:
        aggregates_replace(provider=provider, aggregate_uuids=wanted, generation=generation)


def membership_bulk_update(*, targets, change):
    """Apply `change` (a MembershipChange) to each target provider.

    Args:
        targets: [(provider uuid, generation)]: the generation each provider had when
            the change was previewed.
        change: what to add and remove; each provider's new set is computed from its
            set now (unchanged since the preview when its generation is).
    Returns [BulkOutcome] in `targets` order: APPLIED, CONFLICT (changed since the
    preview) or REFUSED (the service's message, such as an unknown trait). A provider
    the change leaves as it is is not written (its generation stays). Refusals are
    outcomes, never raised.
    Queries: two reads, then one write service call per changed provider.
    """
    uuids = [uuid for uuid, _ in targets]
    providers = {p.uuid: p for p in ResourceProvider.objects.filter(uuid__in=uuids)}
    sets = current_sets(change.kind, [p.id for p in providers.values()])
    def write(provider, generation):
        if generation != provider.generation:
            raise exceptions.ProviderGenerationConflict()
        wanted = change.applied_to(sets[provider.id])
        if wanted == sets[provider.id]:
            return False   # nothing to change: not written, not listed
        _write(change.kind, provider, wanted, generation)

    outcomes = [outcome_of(uuid, providers.get(uuid), lambda p, g=generation: write(p, g))
                for uuid, generation in targets]
    return [outcome for outcome in outcomes if outcome is not None]


def membership_batch_entries(request_id):
    """The trait and aggregate entries one request wrote (a bulk batch), in order."""
    return batch_entries(request_id, actions=MEMBERSHIP_ACTIONS)


def membership_batch_revert(*, request_id):
    """Put back each provider's traits or aggregates from before the batch, each checked
    against the generation its entry left: a provider changed since is a CONFLICT and
    left alone. Returns [BulkOutcome]. The reverts are themselves a batch (this
    request's id)."""
    records = list(membership_batch_entries(request_id))
    providers = {p.uuid: p for p in ResourceProvider.objects.filter(
        uuid__in=[r.entity for r in records])}
    def write(provider, record):
        before, after = record.before or {}, record.after or {}
        if record.action not in before or "generation" not in after:
            raise exceptions.ChangeNotRevertible(
                record, why="it does not record the set before and its generation")
        _write(record.action, provider, before[record.action], after["generation"])

    # the newest entry first, the outcomes in the batch's order
    outcomes = [outcome_of(record.entity, providers.get(record.entity),
                           lambda p, r=record: write(p, r)) for record in reversed(records)]
    return outcomes[::-1]
