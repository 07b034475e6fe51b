"""Writes to resource classes."""
from django.db import IntegrityError, transaction
from django.utils import timezone

from foundation import db_retry

from providers import exceptions, rules, usage
from providers.models import Inventory, ResourceClass
from providers.services import change_log
from providers.services.catalogue import ensure_named
from providers.standard import is_standard_resource_class


@db_retry.retrying
def resource_class_create(*, name):
    """Create a custom class. Raises InvalidCustomName, ResourceClassExists."""
    _check_custom_name(name)
    try:
        with transaction.atomic():
            created = ResourceClass.objects.create(name=name)
            _record(name, "create", None, {"name": name})
            return created
    except IntegrityError:
        raise exceptions.ResourceClassExists(
            f"Conflicting resource class already exists: {name}")


def resource_class_ensure(*, name):
    """Create a custom class unless it exists. Returns (resource_class, created).
    Raises InvalidCustomName."""
    _check_custom_name(name)
    return ensure_named(ResourceClass, name, on_create=lambda: _record(
        name, "create", None, {"name": name}))


def _check_custom_name(name):
    problem = rules.custom_class_name_problem(name)
    if problem:
        raise exceptions.InvalidCustomName(problem)


def _record(name, action, before, after):
    change_log.change_record(kind=change_log.RESOURCE_CLASS, entity=name, action=action,
                             before=before, after=after)


@db_retry.retrying
def resource_class_rename(*, name, new_name):
    """Rename a custom class (microversions 1.2-1.6)."""
    _check_custom_name(new_name)
    with transaction.atomic():
        rc = ResourceClass.objects.select_for_update().filter(name=name).first()
        if rc is None:
            raise exceptions.ResourceClassNotFound(name)
        if is_standard_resource_class(name):
            raise exceptions.CannotChangeStandard(f"Cannot update standard resource class {name}")
        if ResourceClass.objects.filter(name=new_name).exclude(pk=rc.pk).exists():
            raise exceptions.ResourceClassExists(f"Resource class already exists: {new_name}")
        rc.name = new_name
        rc.updated_at = timezone.now()
        try:
            with transaction.atomic():
                rc.save(update_fields=["name", "updated_at"])
        except IntegrityError:
            raise exceptions.ResourceClassExists(f"Resource class already exists: {new_name}")
        _record(name, "rename", {"name": name}, {"name": new_name})
        return rc


@db_retry.retrying
def resource_class_delete(*, name):
    """Delete a custom class. Raises ResourceClassNotFound, CannotChangeStandard (a
    standard class), ResourceClassInUse (inventory or allocations of it exist)."""
    with transaction.atomic():
        rc = ResourceClass.objects.select_for_update().filter(name=name).first()
        if rc is None:
            raise exceptions.ResourceClassNotFound(name)
        if is_standard_resource_class(name):
            raise exceptions.CannotChangeStandard(
                f"Error in delete resource class: Cannot delete standard resource class {name}.")
        # Allocations hold a class only through inventory, except after data damage
        # (placement_status: allocations without inventory); those protect it too.
        if Inventory.objects.filter(resource_class=rc).exists() or usage.class_in_use(rc):
            raise exceptions.ResourceClassInUse(
                f"Error in delete resource class: Cannot delete resource class {name}. "
                "Class is in use in inventory.")
        rc.delete()
        _record(name, "delete", {"name": name}, None)
