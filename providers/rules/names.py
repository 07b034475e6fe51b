"""Name patterns of resource classes, traits and consumer types (resource-classes.md, traits.md).

Each pattern is written here once; JSON schemas use the strings (jsonschema
searches them), Python code the compiled forms.
"""
import re

from foundation import jsonschemas

CUSTOM_PREFIX = "CUSTOM_"
# the trait that makes a provider share its inventory with the trees of its aggregates
SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"
MAX_NAME_LENGTH = 255

# Every resource class, trait and consumer type name has this form.
NAME_REGEX = r"^[A-Z0-9_]+$"
# What a user may create: CUSTOM_ and then the same characters.
CUSTOM_NAME_REGEX = r"^CUSTOM_[A-Z0-9_]+$"
# The suffix of a request group (`resources{S}`, `mappings` keys, 1.33+).
GROUP_SUFFIX_REGEX = r"[a-zA-Z0-9_-]{1,64}"
GROUP_SUFFIX_FORM = "1 to 64 letters, digits, '_' or '-'"

CLASS_NAME_PATTERN = re.compile(NAME_REGEX)
CUSTOM_NAME_PATTERN = re.compile(CUSTOM_NAME_REGEX)

# A custom resource class name as the API's JSON schemas check it (POST/PUT /resource_classes).
CUSTOM_NAME_SCHEMA = {"type": "string", "pattern": CUSTOM_NAME_REGEX,
                      "maxLength": MAX_NAME_LENGTH}
# How the UI describes a name a user may create (form help and errors).
CUSTOM_NAME_FORM = f"{CUSTOM_PREFIX} followed by upper-case letters, digits and underscores"
CUSTOM_NAME_HELP = f"{CUSTOM_NAME_FORM} (at most {MAX_NAME_LENGTH} characters)."
# Placement's refusal of a trait name it may not create (PUT /traits/{name}).
INVALID_TRAIT = ('The trait is invalid. A valid trait must be no longer than 255 characters, '
                 'start with the prefix "CUSTOM_" and use following characters: "A"-"Z", '
                 '"0"-"9" and "_"')


def is_custom(name):
    """True for a CUSTOM_* name (anything else is a standard name or invalid)."""
    return name.startswith(CUSTOM_PREFIX)


def is_valid_custom_name(name):
    """True when `name` may be created as a custom class or trait (the whole string)."""
    return 0 < len(name) <= MAX_NAME_LENGTH and CUSTOM_NAME_PATTERN.fullmatch(name) is not None


def custom_trait_name_problem(name):
    """Placement's refusal of `name` as a new trait (PUT /traits/{name}), or None."""
    return None if is_valid_custom_name(name) else INVALID_TRAIT


def custom_name_explained(name):
    """What is wrong with `name` as a new custom resource class or trait, for people (the
    operator UI; the API keeps Placement's own words), with a name that would do."""
    fixed = CUSTOM_PREFIX + re.sub(r"[^A-Z0-9_]", "_", name.upper().removeprefix(CUSTOM_PREFIX))
    if len(name) > MAX_NAME_LENGTH:
        return f"The name has {len(name)} characters; at most {MAX_NAME_LENGTH} are allowed."
    if fixed.strip("_") == CUSTOM_PREFIX.strip("_"):   # nothing after the prefix to keep
        return (f"{name or 'An empty name'} cannot be created: a name is {CUSTOM_PREFIX} "
                "followed by at least one upper-case letter, digit or underscore "
                f"(e.g. {CUSTOM_PREFIX}FPGA).")
    if not name.startswith(CUSTOM_PREFIX):
        return (f"{name} cannot be created: a new name must start with {CUSTOM_PREFIX} "
                f"(e.g. {fixed}).")
    return (f"{name} cannot be created: after {CUSTOM_PREFIX} only upper-case letters, "
            f"digits and underscores are allowed (e.g. {fixed}).")


def custom_class_name_problem(name):
    """Placement's refusal of `name` as a new resource class (POST /resource_classes:
    its schema message, without jsonschema's account of the schema), or None."""
    error = jsonschemas.first_error(name, CUSTOM_NAME_SCHEMA)
    return None if error is None else f"JSON does not validate: {error.message}"
