"""Writes to a provider's trait set (traits.md, provider traits)."""
from django.db import IntegrityError, transaction

from foundation import db_retry

from providers import exceptions
from providers.models import ProviderTrait, Trait
from providers.services import change_log
from providers.services.providers import provider_bump_generation


@db_retry.retrying
def provider_traits_replace(*, provider, trait_names, generation):
    """Replace the complete trait set of `provider`.

    Args:
        provider: ResourceProvider.
        trait_names: iterable of existing trait names (duplicates collapse).
        generation: the generation the client sent.
    Order: generation mismatch (409 placement.concurrent_update) -> unknown
    trait names (400 "No such trait <names>") -> write.
    The generation is incremented (compare-and-swap) only if the set changed.
    Returns the resulting list of Trait rows.
    """
    names = set(trait_names)
    try:
        with transaction.atomic():
            if generation != provider.generation:
                raise exceptions.ProviderGenerationConflict()
            traits = list(Trait.objects.filter(name__in=names).order_by("id"))
            missing = sorted(names - {trait.name for trait in traits})
            if missing:
                raise exceptions.UnknownTraits(missing)
            wanted = {trait.id for trait in traits}
            current_names = dict(ProviderTrait.objects.filter(provider=provider)
                                 .values_list("trait_id", "trait__name"))
            current = set(current_names)
            if wanted != current:
                provider_bump_generation(provider, generation)
                ProviderTrait.objects.filter(
                    provider=provider, trait_id__in=current - wanted).delete()
                ProviderTrait.objects.bulk_create([
                    ProviderTrait(provider=provider, trait_id=trait_id)
                    for trait_id in wanted - current])
                _record(provider, generation, sorted(current_names.values()),
                        sorted(trait.name for trait in traits))
    except IntegrityError:
        raise exceptions.ProviderChangedConcurrently(
            "Update conflict: the traits of this provider were changed by another request. "
            "Please retry.")
    return traits


@db_retry.retrying
def provider_traits_delete(*, provider):
    """Remove every trait of `provider` (no generation check).

    Generation +1 (compare-and-swap against the value read) only if the
    provider had traits. Raises ProviderChangedConcurrently on a concurrent change.
    """
    with transaction.atomic():
        names = sorted(ProviderTrait.objects.filter(provider=provider)
                       .values_list("trait__name", flat=True))
        if names:
            old_generation = provider.generation
            provider_bump_generation(provider)
            ProviderTrait.objects.filter(provider=provider).delete()
            _record(provider, old_generation, names, [])


def _record(provider, old_generation, before, after):
    change_log.change_record(
        kind=change_log.PROVIDER, entity=provider.uuid, action="traits",
        before={"generation": old_generation, "traits": before},
        after={"generation": provider.generation, "traits": after})
