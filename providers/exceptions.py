"""Errors raised by providers.services and selectors; api/exceptions.py renders them."""
from placement_site.api import errors
from placement_site.api.exceptions import BadRequest, ConcurrentUpdate, Conflict, NotFound


class ResourceClassNotFound(NotFound):
    def __init__(self, name):
        super().__init__(f"No such resource class {name}.")


class ResourceClassExists(Conflict):
    pass


class ResourceClassInUse(Conflict):
    pass


class CannotChangeStandard(BadRequest):
    pass


class TraitNotFound(NotFound):
    def __init__(self, names):
        super().__init__(f"No such trait(s): {', '.join(names)}.")


class TraitInUse(Conflict):
    def __init__(self, name):
        super().__init__(f"The trait {name} is in use by a resource provider.")


class ProviderNotFound(NotFound):
    def __init__(self, uuid):
        super().__init__(f"No resource provider with uuid {uuid} found")


class ProviderGenerationConflict(ConcurrentUpdate):
    def __init__(self, detail=None):
        super().__init__(
            detail or "Resource provider's generation already changed. "
                      "Please update the generation and try again.")


class DuplicateName(Conflict):
    code = errors.DUPLICATE_NAME


class InventoryInUse(Conflict):
    code = errors.INVENTORY_INUSE
