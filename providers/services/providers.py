"""Writes to resource providers and their trees (resource-providers.md).

Every function owns its transaction. Tree writes (create, re-parent, delete)
take the tree lock (services.tree_lock) first, then re-read the rows they
change, so the MPTT fields they rely on are current.

Callers: the API views, the admin, management commands and the reshaper.
"""
import uuid as uuidlib

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from foundation import db_retry
from foundation import uuids
from providers import exceptions, usage
from providers.models import ResourceProvider
from providers.services import change_log
from providers.services.tree_lock import lock_trees

# Sentinel for provider_update(parent_uuid=...): "leave the parent alone".
UNCHANGED = object()


# Canonical lower-case dashed form of a uuid-like string (ValueError otherwise).
normalize_uuid = uuids.canonical_uuid


def provider_bump_generation(provider, expected=None, detail=None):
    """Compare-and-swap the provider generation: +1 if it still equals `expected`.

    Args:
        provider: a ResourceProvider; its `generation` is updated in memory.
        expected: the generation the caller based its change on
            (default: `provider.generation` as read).
        detail: message of the 409 when the swap fails.
    Runs `UPDATE resource_providers SET generation = generation + 1
    WHERE id = %s AND generation = %s` and checks the row count, so the
    caller must be inside the transaction that makes the related change.
    Raises ProviderGenerationConflict (409 placement.concurrent_update).
    Returns the new generation.
    """
    if expected is None:
        expected = provider.generation
    changed = (ResourceProvider.objects
               .filter(pk=provider.pk, generation=expected)
               .update(generation=F("generation") + 1, updated_at=timezone.now()))
    if changed != 1:
        raise exceptions.ProviderGenerationConflict(detail)
    provider.generation = int(expected) + 1  # a JSON 5.0 passes the integer schema
    return provider.generation


@db_retry.retrying
def provider_create(*, name, uuid=None, parent_uuid=None):
    """Create a provider (a root, or a child of `parent_uuid`).

    Args:
        name: non-empty, unique.
        uuid: uuid-like string (normalized to canonical form) or None to
            generate one.
        parent_uuid: exact uuid string of an existing provider, or None.
    Returns the new ResourceProvider (generation 0; root set).
    Raises InvalidProvider (bad uuid, empty name, bad parent), DuplicateName (409).
    """
    if uuid and not uuids.is_uuid_like(uuid):
        raise exceptions.InvalidProvider(f"Invalid uuid for a resource provider: {uuid}")
    uuid = normalize_uuid(uuid) if uuid else str(uuidlib.uuid4())
    prefix = (f'Unable to create resource provider "{name}", {uuid}: '
              "Object action create failed because: ")
    if not name:
        raise exceptions.InvalidProvider(prefix + "name is required")
    if parent_uuid is not None and parent_uuid == uuid:
        raise exceptions.InvalidProvider(prefix + "parent provider UUID cannot be same as UUID. Please set "
                                  "parent provider UUID to None if there is no parent.")
    try:
        with transaction.atomic():
            lock_trees()
            parent = None
            if parent_uuid is not None:
                parent = ResourceProvider.objects.filter(uuid=parent_uuid).first()
                if parent is None:
                    raise exceptions.InvalidProvider(prefix + "parent provider UUID does not exist.")
            _check_duplicates(uuid, name)
            provider = ResourceProvider(uuid=uuid, name=name, parent=parent)
            provider.save()
            provider.root_id = parent.root_id if parent is not None else provider.pk
            ResourceProvider.objects.filter(pk=provider.pk).update(root_id=provider.root_id)
            change_log.change_record(
                kind=change_log.PROVIDER, entity=uuid, action="create",
                after={"name": name, "parent": parent_uuid, "generation": provider.generation})
    except IntegrityError:
        # A concurrent create won the race for the name or the uuid.
        raise exceptions.DuplicateName(
            f"Conflicting resource provider uuid: {uuid} or name: {name} already exists.")
    return provider


def _check_duplicates(uuid, name):
    taken = ResourceProvider.objects.filter(uuid=uuid).exists()
    if taken:
        raise exceptions.DuplicateName(
            f"Conflicting resource provider uuid: {uuid} already exists.")
    if ResourceProvider.objects.filter(name=name).exists():
        raise exceptions.DuplicateName(
            f"Conflicting resource provider name: {name} already exists.")


@db_retry.retrying
def provider_update(*, uuid, name, parent_uuid=UNCHANGED, allow_reparent=True):
    """Rename a provider and/or change its parent.

    Args:
        uuid: exact uuid of the provider.
        name: the new name (the empty string is accepted, as upstream does).
        parent_uuid: UNCHANGED (default) to keep the parent; None to make the
            provider a root; or the exact uuid of the new parent.
        allow_reparent: False gives the pre-1.37 rules (a parent may only be
            set when there is none; never changed or removed).
    Moving a provider moves its whole subtree; `root` is rewritten for all
    of it. The generation is not changed.
    Returns (provider, previous_modification_time).
    Raises ProviderNotFound, InvalidProvider (parent rules), DuplicateName.
    """
    prefix = f"Unable to save resource provider {uuid}: Object action "
    try:
        with transaction.atomic():
            lock_trees()
            provider = (ResourceProvider.objects.select_related("parent")
                        .filter(uuid=uuid).first())
            if provider is None:
                raise exceptions.ProviderNotFound(uuid)
            previous = provider.updated_at or provider.created_at
            before = _described(provider)
            if parent_uuid is not UNCHANGED:
                _change_parent(provider, parent_uuid, allow_reparent, prefix)
            if ResourceProvider.objects.filter(name=name).exclude(pk=provider.pk).exists():
                raise exceptions.DuplicateName(
                    f"Conflicting resource provider {name} already exists.")
            provider.name = name
            provider.updated_at = timezone.now()
            ResourceProvider.objects.filter(pk=provider.pk).update(
                name=name, updated_at=provider.updated_at)
            after = _described(provider)
            if after != before:
                change_log.change_record(kind=change_log.PROVIDER, entity=provider.uuid,
                                         action="update", before=before, after=after)
    except IntegrityError:
        raise exceptions.DuplicateName(f"Conflicting resource provider {name} already exists.")
    return provider, previous


def _described(provider):
    """A provider's name and parent uuid, as the change log shows them."""
    parent = provider.parent
    return {"name": provider.name, "parent": parent.uuid if parent is not None else None}


def _change_parent(provider, parent_uuid, allow_reparent, prefix):
    """Apply the parent rules of PUT /resource_providers/{uuid}; moves the subtree."""
    if parent_uuid is None:
        if provider.parent_id is None:
            return
        if not allow_reparent:
            raise exceptions.InvalidProvider(prefix + "update failed because: un-parenting a provider is "
                                      "not currently allowed.")
        new_parent = None
    else:
        new_parent = ResourceProvider.objects.filter(uuid=parent_uuid).first()
        if new_parent is None:
            raise exceptions.InvalidProvider(prefix + "create failed because: parent provider UUID does "
                                      "not exist.")
        if new_parent.pk == provider.parent_id:
            return
        if provider.parent_id is not None and not allow_reparent:
            raise exceptions.InvalidProvider(prefix + "update failed because: re-parenting a provider is "
                                      "not currently allowed.")
        if (new_parent.tree_id == provider.tree_id
                and provider.lft <= new_parent.lft and new_parent.rght <= provider.rght):
            raise exceptions.InvalidProvider(prefix + "update failed because: creating loop in the provider "
                                      "tree is not allowed.")
    provider.parent = new_parent
    provider.save()  # django-mptt moves the node and its subtree
    provider.refresh_from_db()
    new_root = new_parent.root_id if new_parent is not None else provider.pk
    ResourceProvider.objects.filter(
        tree_id=provider.tree_id, lft__gte=provider.lft, rght__lte=provider.rght,
    ).update(root_id=new_root)
    provider.root_id = new_root


@db_retry.retrying
def provider_delete(*, uuid):
    """Delete a provider with its inventories, trait and aggregate associations.

    Raises ProviderNotFound, ProviderHasChildren
    (placement.resource_provider.cannot_delete_parent) or ProviderInUse
    (placement.resource_provider.inuse).
    """
    with transaction.atomic():
        lock_trees()
        # Row lock: allocation writers bump this row's generation, so they wait for us.
        # OF: PostgreSQL refuses to lock the nullable side of the parent join; MariaDB
        # has no OF, and locks the parent's row too (harmless: tree writers already
        # take turns at the tree guard).
        locking = ({"of": ("self",)} if connection.features.has_select_for_update_of
                   else {})
        provider = (ResourceProvider.objects.select_for_update(**locking)
                    .select_related("parent").filter(uuid=uuid).first())
        if provider is None:
            raise exceptions.ProviderNotFound(
                uuid, f"No resource provider with uuid {uuid} found for delete")
        if ResourceProvider.objects.filter(parent_id=provider.pk).exists():
            raise exceptions.ProviderHasChildren(uuid)
        if usage.provider_in_use(provider):
            raise exceptions.ProviderInUse(uuid)
        provider.delete()
        change_log.change_record(
            kind=change_log.PROVIDER, entity=provider.uuid, action="delete",
            before={**_described(provider), "generation": provider.generation})

