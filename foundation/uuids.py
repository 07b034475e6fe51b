"""Placement's "uuid-like" strings (spec README, conventions)."""
import re
import uuid as uuidlib


def is_uuid_like(value):
    """True when uuid.UUID() accepts `value` and its hex digits are exactly the input's
    once `urn:`, `uuid:`, braces and dashes are removed."""
    return canonical_uuid_or_none(value) is not None


def canonical_uuid_or_none(value):
    """The canonical lower-case dashed form of a uuid-like string, or None."""
    try:
        parsed = uuidlib.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return None
    bare = value.lower()
    for junk in ("urn:", "uuid:", "{", "}", "-"):
        bare = bare.replace(junk, "")
    return str(parsed) if parsed.hex == bare else None


def canonical_uuid(value):
    """The canonical form of a uuid-like string; ValueError for anything else."""
    canonical = canonical_uuid_or_none(value)
    if canonical is None:
        raise ValueError(f"not a uuid: {value!r}")
    return canonical


# The canonical form only (query strings, tree documents: spec README "UUID forms").
CANONICAL_UUID_REGEX = (
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# The keys of allocation and reshaper bodies (upstream's loose key pattern).
UUID_KEY_REGEX = "^[0-9a-fA-F-]{36}$"
# Canonical uuids inside a text (a service's message that the UI rewrites with names).
UUIDS_IN_TEXT = re.compile(CANONICAL_UUID_REGEX.strip("^$"))


def is_canonical_uuid(value):
    """True for the canonical dashed form only (what query strings must use: spec README,
    "UUID forms"); body uuids are uuid-like."""
    return isinstance(value, str) and re.fullmatch(CANONICAL_UUID_REGEX, value) is not None
