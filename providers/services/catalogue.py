"""Shared by the resource class and trait services: rows known only by a unique name."""
from django.db import IntegrityError, transaction

from foundation import db_retry


@db_retry.retrying
def ensure_named(model, name, on_create=None):
    """(row, created): the `model` row called `name`, created unless it exists.

    A concurrent create of the same name counts as "already there". on_create()
    runs in the creating transaction (the change log entry).
    """
    existing = model.objects.filter(name=name).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            created = model.objects.create(name=name)
            if on_create is not None:
                on_create()
            return created, True
    except IntegrityError:
        return model.objects.get(name=name), False
