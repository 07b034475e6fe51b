"""Writes to the trait catalogue (provider trait sets live in services/provider_traits.py)."""
from django.db import transaction

from foundation import db_retry
from providers import exceptions, rules
from providers.models import ProviderTrait, Trait
from providers.services import change_log
from providers.services.catalogue import ensure_named
from providers.standard import is_standard_trait


def trait_ensure(*, name):
    """Create a custom trait unless it exists. Returns (trait, created). Raises
    InvalidCustomName for anything but a CUSTOM_ name (PUT /traits/{name} refuses even
    existing standard names)."""
    problem = rules.custom_trait_name_problem(name)
    if problem:
        raise exceptions.InvalidCustomName(problem)
    return ensure_named(Trait, name, on_create=lambda: change_log.change_record(
        kind=change_log.TRAIT, entity=name, action="create", after={"name": name}))


@db_retry.retrying
def trait_delete(*, name):
    with transaction.atomic():
        trait = Trait.objects.select_for_update().filter(name=name).first()
        if trait is None:
            raise exceptions.TraitNotFound([name])
        if is_standard_trait(name):
            raise exceptions.CannotChangeStandard(f"Cannot delete standard trait {name}.")
        if ProviderTrait.objects.filter(trait=trait).exists():
            raise exceptions.TraitInUse(name)
        trait.delete()
        change_log.change_record(kind=change_log.TRAIT, entity=name, action="delete",
                                 before={"name": name})
