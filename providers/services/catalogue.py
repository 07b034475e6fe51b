"""Shared by the resource class and trait services: rows known only by a unique name."""
from django.db import IntegrityError, transaction


def ensure_named(model, name):
    """(row, created): the `model` row called `name`, created unless it exists.

    A concurrent create of the same name counts as "already there".
    """
    existing = model.objects.filter(name=name).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            return model.objects.create(name=name), True
    except IntegrityError:
        return model.objects.get(name=name), False
