"""Domain rules of providers as pure functions (no database, no HTTP), one module a concept.

* inventory: the fields of an inventory record (ranges, defaults, JSON schema)
* capacity: (total - reserved) * allocation_ratio and the microversion-gated capacity rule
* names: resource class / trait / CUSTOM_ name patterns

Uuid-like strings are not providers' alone: foundation/uuids.py holds them.

Used by the services, by Model.clean() (so the admin has them), by the JSON
schemas and by the database constraints. They raise providers.exceptions
(domain errors), never HTTP errors.
"""
from providers.rules.capacity import (  # noqa: F401
    CAPACITY_NON_NEGATIVE,
    CAPACITY_POSITIVE,
    NEGATIVE_RATIO,
    capacity,
    check_capacity,
    inventory_capacity_error,
    reported_capacity,
    unallocatable,
)
from providers.rules.inventory import (  # noqa: F401
    INTEGER_BOUNDS,
    INTEGER_FIELDS,
    INVENTORY_DEFAULTS,
    INVENTORY_FIELDS,
    MAX_ALLOCATION_RATIO,
    MAX_INT,
    field_problems,
    inventories_schema,
    inventory_record,
    record_schema,
    with_defaults,
)
from providers.rules.names import (  # noqa: F401
    CLASS_NAME_PATTERN,
    CUSTOM_NAME_FORM,
    CUSTOM_NAME_HELP,
    CUSTOM_NAME_PATTERN,
    CUSTOM_NAME_REGEX,
    CUSTOM_NAME_SCHEMA,
    CUSTOM_PREFIX,
    GROUP_SUFFIX_FORM,
    GROUP_SUFFIX_REGEX,
    INVALID_TRAIT,
    MAX_NAME_LENGTH,
    NAME_REGEX,
    custom_class_name_problem,
    custom_name_explained,
    custom_trait_name_problem,
    is_custom,
    is_valid_custom_name,
)
