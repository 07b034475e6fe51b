"""Writes to the trait catalogue (provider trait sets live in services/provider_traits.py)."""
from django.db import IntegrityError, transaction

from providers import exceptions
from providers.models import ProviderTrait, Trait
from providers.standard import is_standard_trait


def trait_ensure(*, name):
    """Create a custom trait unless it exists. Returns (trait, created)."""
    existing = Trait.objects.filter(name=name).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            return Trait.objects.create(name=name), True
    except IntegrityError:
        return Trait.objects.get(name=name), False


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
