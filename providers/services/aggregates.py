"""Writes to a provider's aggregate associations (aggregates.md)."""
from django.db import IntegrityError, transaction

from foundation import db_retry

from providers import exceptions
from providers.models import Aggregate, ProviderAggregate, ResourceProvider
from providers.services import change_log
from providers.services.providers import provider_bump_generation


@db_retry.retrying
def aggregates_replace(*, provider, aggregate_uuids, generation=None, bump_generation=True):
    """Replace the complete aggregate set of `provider`.

    Args:
        provider: ResourceProvider.
        aggregate_uuids: iterable of uuid-like strings, stored exactly as given
            (unknown aggregates are created).
        generation: the generation the client sent (1.19+), checked first;
            None skips the check (1.1-1.18).
        bump_generation: True (1.19+) increments the generation, even if the
            set is unchanged; False (1.1-1.18) leaves it alone.
    Raises ProviderGenerationConflict / ProviderChangedConcurrently (409
    placement.concurrent_update).
    Returns the new generation.
    """
    wanted = list(dict.fromkeys(aggregate_uuids))
    old_generation = provider.generation
    try:
        with transaction.atomic():
            if generation is not None and generation != provider.generation:
                raise exceptions.ProviderGenerationConflict()
            if bump_generation:
                provider_bump_generation(provider, generation, detail=(
                    "Update conflict: Resource provider's generation already changed. "
                    "Please update the generation and try again."))
            else:
                # Serialise with other writers of this provider without changing it.
                ResourceProvider.objects.select_for_update().filter(pk=provider.pk).first()
            if wanted:
                Aggregate.objects.bulk_create(
                    [Aggregate(uuid=value) for value in wanted], ignore_conflicts=True)
            ids = dict(Aggregate.objects.filter(uuid__in=wanted).values_list("uuid", "id"))
            current_uuids = dict(ProviderAggregate.objects.filter(provider=provider)
                                 .values_list("aggregate_id", "aggregate__uuid"))
            current = set(current_uuids)
            wanted_ids = {ids[value] for value in wanted}
            ProviderAggregate.objects.filter(
                provider=provider, aggregate_id__in=current - wanted_ids).delete()
            ProviderAggregate.objects.bulk_create([
                ProviderAggregate(provider=provider, aggregate_id=agg_id)
                for agg_id in wanted_ids - current])
            if bump_generation or wanted_ids != current:
                change_log.change_record(
                    kind=change_log.PROVIDER, entity=provider.uuid, action="aggregates",
                    before={"generation": old_generation,
                            "aggregates": sorted(current_uuids.values())},
                    after={"generation": provider.generation, "aggregates": sorted(wanted)})
    except IntegrityError:
        raise exceptions.ProviderChangedConcurrently(
            "Update conflict: the aggregates of this provider were changed by another "
            "request. Please retry.")
    return provider.generation
