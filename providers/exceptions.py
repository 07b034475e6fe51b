"""Errors raised by providers' services, selectors, rules and query grammars.

Domain errors (foundation.domain_errors): a kind (InvalidInput, NotFound,
Conflict, ConcurrentUpdate), Placement's message and its error code. Nothing
here knows HTTP: foundation/api/exceptions.py maps the kinds to statuses,
and the admin, UI and commands show `message`.
"""
from foundation import domain_errors as codes
from foundation.domain_errors import ConcurrentUpdate, Conflict, InvalidInput, NotFound

# --- resource classes and traits ------------------------------------------------


class ResourceClassNotFound(NotFound):
    def __init__(self, name, prefix=""):
        super().__init__(f"{prefix}No such resource class {name}.")


class ResourceClassExists(Conflict):
    pass


class ResourceClassInUse(Conflict):
    pass


class CannotChangeStandard(InvalidInput):
    pass


class InvalidCustomName(InvalidInput):
    """A custom class or trait name that may not be created (providers.rules.names);
    the message is Placement's refusal."""


class TraitNotFound(NotFound):
    def __init__(self, names):
        super().__init__(f"No such trait(s): {', '.join(names)}.")


class TraitInUse(Conflict):
    def __init__(self, name):
        super().__init__(f"The trait {name} is in use by a resource provider.")


class UnknownTraits(InvalidInput):
    """PUT .../traits names traits that do not exist."""

    def __init__(self, names):
        super().__init__(f"No such trait {', '.join(names)}")


# --- providers ------------------------------------------------------------------------


class ProviderNotFound(NotFound):
    def __init__(self, uuid, message=None):
        super().__init__(message or f"No resource provider with uuid {uuid} found")


class InvalidProvider(InvalidInput):
    """A provider create/update the tree rules refuse (name, parent, loops)."""


class ProviderGenerationConflict(ConcurrentUpdate):
    def __init__(self, message=None):
        super().__init__(
            message or "Resource provider's generation already changed. "
                       "Please update the generation and try again.")


class ProviderChangedConcurrently(ConcurrentUpdate):
    """Another request wrote the same rows first (an IntegrityError underneath)."""


class DuplicateName(Conflict):
    code = codes.DUPLICATE_NAME


class ProviderHasChildren(Conflict):
    code = codes.PROVIDER_CANNOT_DELETE_PARENT

    def __init__(self, uuid):
        super().__init__(f"Unable to delete parent resource provider {uuid}: It has child "
                         "resource providers.")


class ProviderInUse(Conflict):
    code = codes.PROVIDER_IN_USE

    def __init__(self, uuid):
        super().__init__(f"Unable to delete resource provider {uuid}: Resource provider has "
                         "allocations.")


# --- inventories ----------------------------------------------------------------------


class InvalidInventoryValue(InvalidInput):
    """A field of an inventory record is outside its range (providers.rules.inventory)."""


class InvalidInventoryCapacity(InvalidInput):
    """reserved/allocation_ratio leave a capacity the microversion's rule refuses."""


class UnknownResourceClass(InvalidInput):
    """An inventory names a class that does not exist; `.name` is the class name."""

    def __init__(self, name, message):
        super().__init__(message)
        self.name = name


class InventoryNotFound(NotFound):
    pass


class NoSuchInventory(InvalidInput):
    """PUT .../inventories/{rc} for a class the provider has no inventory of (400)."""

    def __init__(self, provider_uuid, resource_class):
        super().__init__(f"No inventory record with resource class for resource provider "
                         f"{provider_uuid}: No inventory of class {resource_class} found.")


class InventoryExists(ConcurrentUpdate):
    """POST .../inventories for a class the provider already has (Quirk: concurrent_update)."""

    def __init__(self, provider_uuid, resource_class):
        super().__init__(f"Update conflict: Inventory for '{resource_class}' on resource "
                         f"provider '{provider_uuid}' already exists.")


class InventoryInUse(Conflict):
    """Inventory that allocations use cannot be removed (placement.inventory.inuse)."""

    code = codes.INVENTORY_INUSE

    def __init__(self, provider_uuid, classes, prefix=""):
        super().__init__(f"{prefix}Inventory for '{', '.join(classes)}' on resource provider "
                         f"'{provider_uuid}' in use.")


class InventoryInUseOnDelete(ConcurrentUpdate):
    """DELETE .../inventories/{rc} of a used class (Quirk: code concurrent_update)."""

    def __init__(self, provider_uuid, resource_class):
        super().__init__(f"Unable to delete inventory of class {resource_class}: Inventory "
                         f"for '{resource_class}' on resource provider '{provider_uuid}' "
                         "in use.")


# --- query strings --------------------------------------------------------------------


class InvalidQuery(InvalidInput):
    """A query parameter of GET /resource_providers breaks its grammar, or names something
    that does not exist. The value grammars of `resources`, `required` and `member_of`
    (providers/query_params.py) raise it for GET /allocation_candidates too; candidates'
    own rules raise candidates.exceptions.InvalidCandidatesQuery."""


class ChangeNotRevertible(InvalidInput):
    """A change log entry the operator UI cannot undo (what it changed is not recorded
    whole, or it is not an inventory or allocation change)."""

    def __init__(self, record, why="only inventory and allocation changes are undone"):
        super().__init__(f"Change {record.id} ({record.kind} {record.action}) cannot be "
                         f"reverted: {why}.")


class ChangeNotFound(NotFound):
    """A change log entry asked for by id that is not in the log (operator UI)."""

    def __init__(self, record_id):
        super().__init__(f"There is no change log entry {record_id}: it was pruned, or "
                         "never written.")


class ChangedSinceEntry(ConcurrentUpdate):
    """A revert of an entry whose entity changed after it (operator UI)."""

    def __init__(self, what, then, now):
        super().__init__(f"{what} changed after this entry (generation {then} then, {now} "
                         "now): revert the newer entries first, or edit it.")
