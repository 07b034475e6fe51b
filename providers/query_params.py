"""Parsers for the query grammars shared by GET /resource_providers and
GET /allocation_candidates (resource-providers.md "Query parameters",
allocation-candidates.md §1).

Pure functions: no database access, no name resolution (unknown trait or
resource class names are reported later, by whoever resolves them, because
Placement resolves names lazily). Every syntax error raises
providers.exceptions.InvalidQuery (a domain error) with Placement's wording.

Returned structures
-------------------

``parse_resources(value) -> dict[str, int]``
    ``"VCPU:2,MEMORY_MB:1024"`` -> ``{"VCPU": 2, "MEMORY_MB": 1024}``.
    A class repeated in one value keeps its last amount.

``parse_required(values, version) -> TraitQuery``
    ``TraitQuery.required``  frozenset of trait names that must all be present;
    ``TraitQuery.forbidden`` frozenset of trait names that must all be absent;
    ``TraitQuery.any_of``    tuple of frozensets from ``in:`` values (1.39+);
                             for each set at least one trait must be present.
    ``TraitQuery.required_sets()`` returns every positive condition as a list
    of any-of sets (a plain required trait T becomes ``{T}``), which is the
    form allocation candidates reason about.
    ``TraitQuery.names()`` is every trait name mentioned (for resolution).

``parse_member_of(values, version, key="member_of") -> AggregateQuery``
    ``AggregateQuery.any_of``    tuple of frozensets of aggregate uuid strings;
                                 the provider must be in at least one
                                 aggregate of EVERY set (sets are ANDed);
    ``AggregateQuery.forbidden`` frozenset of aggregate uuid strings the
                                 provider must be in none of.
    Aggregate uuids are kept exactly as given (they are compared as exact
    strings with stored associations).

Each ``parse_*`` that takes ``values`` expects the list of every occurrence of
the key, in query-string order (``request.GET.getlist(key)``); the functions
apply Placement's "last one wins" / "repeatable from 1.xx" rules themselves.
``*_value`` variants parse a single occurrence.
"""
from dataclasses import dataclass, field

from foundation.api.microversion import (
    ANY_OF_TRAITS,
    FORBIDDEN_AGGREGATES,
    FORBIDDEN_TRAITS,
    MEMBER_OF_REPEATED,
)
from foundation.uuids import is_uuid_like
from providers.exceptions import InvalidQuery
from providers.rules.inventory import MAX_INT

_RESOURCES_FORM = (
    "Badly formed resources parameter. Expected resources query string "
    "parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: {}."
)


@dataclass(frozen=True)
class TraitQuery:
    """Trait conditions of one `required` key (see module docstring)."""

    required: frozenset = field(default_factory=frozenset)
    forbidden: frozenset = field(default_factory=frozenset)
    any_of: tuple = ()

    def required_sets(self):
        """Every positive condition as an any-of set: [{T1}, {T2}, {A, B}, ...]."""
        return [frozenset([name]) for name in sorted(self.required)] + list(self.any_of)

    def names(self):
        """All trait names mentioned, positive or forbidden."""
        found = set(self.required) | set(self.forbidden)
        for names in self.any_of:
            found |= names
        return found

    def __bool__(self):
        return bool(self.required or self.forbidden or self.any_of)

    def merge(self, other):
        """AND two queries together."""
        return TraitQuery(
            required=self.required | other.required,
            forbidden=self.forbidden | other.forbidden,
            any_of=self.any_of + tuple(s for s in other.any_of if s not in self.any_of),
        )


@dataclass(frozen=True)
class AggregateQuery:
    """Aggregate conditions of one `member_of` key (see module docstring)."""

    any_of: tuple = ()
    forbidden: frozenset = field(default_factory=frozenset)

    def __bool__(self):
        return bool(self.any_of or self.forbidden)


# --- resources ---------------------------------------------------------------

# No inventory holds more than MAX_INT of a class (max_unit <= MAX_INT), so a larger
# amount fits nowhere and Placement's rules give the empty answer (as upstream and
# PostgreSQL do), not a 400: the contract bounds an amount only below (>= 1). Larger
# amounts are read as MAX_INT + 1, which every database compares (SQLite stores no
# integer past 2**63 - 1).
NEVER_FITS = MAX_INT + 1

def parse_resources(value):
    """Parse `RC:N[,RC:N...]` into {class name: amount}.

    Raises InvalidQuery for an empty value, an element that is not exactly
    `name:amount`, a non-integer amount or an amount < 1.
    """
    if value.strip() == "":
        raise InvalidQuery(_RESOURCES_FORM.format("empty string"))
    result = {}
    for element in value.split(","):
        parts = element.split(":")
        if len(parts) != 2:
            raise InvalidQuery(_RESOURCES_FORM.format(element))
        name, raw_amount = parts
        try:
            amount = int(raw_amount)
        except ValueError:
            raise InvalidQuery(
                f"Requested resource {name} expected positive integer amount. "
                f"Got: {raw_amount}.")
        if amount < 1:
            raise InvalidQuery(f"Requested resource {name} requires amount >= 1. Got: {amount}.")
        result[name] = min(amount, NEVER_FITS)
    return result


# --- required ------------------------------------------------------------------

def _required_form(version):
    if version >= FORBIDDEN_TRAITS:
        return "HW_CPU_X86_VMX,!CUSTOM_MAGIC"
    return "HW_CPU_X86_VMX,CUSTOM_MAGIC"


def parse_required_value(value, version):
    """Parse one occurrence of `required` (`T1,!T2` or, 1.39+, `in:T1,T2`)."""
    if value.startswith("in:"):
        if version < ANY_OF_TRAITS:
            raise InvalidQuery(
                "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
                f"microversion 1.39. Got: {value}")
        names = [name.strip() for name in value[3:].split(",")]
        if any(not name for name in names):
            raise InvalidQuery(
                "Invalid query string parameters: Expected 'required' parameter value "
                "of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: "
                f"{value}")
        if any(name.startswith("!") for name in names):
            raise InvalidQuery(
                "Invalid query string parameters: The format "
                "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. "
                f"Got: {value}")
        return TraitQuery(any_of=(frozenset(names),))

    allow_forbidden = version >= FORBIDDEN_TRAITS
    required, forbidden = set(), set()
    for element in value.split(","):
        name = element.strip()
        negated = allow_forbidden and name.startswith("!")
        if negated:
            name = name.lstrip("!")  # Quirk: any number of leading '!' means one
        if not name:
            raise InvalidQuery(
                "Invalid query string parameters: Expected 'required' parameter value "
                f"of the form: {_required_form(version)}. Got an empty trait in: {value}")
        (forbidden if negated else required).add(name)
    if not allow_forbidden and any(name.startswith("!") for name in required):
        raise InvalidQuery(
            "Invalid query string parameters: Expected 'required' parameter value "
            f"of the form: {_required_form(version)}. Got: {value}")
    return TraitQuery(required=frozenset(required), forbidden=frozenset(forbidden))


def parse_required(values, version):
    """Parse every occurrence of `required`: the last only below 1.39, ANDed from 1.39."""
    values = list(values)
    if not values:
        return TraitQuery()
    if version < ANY_OF_TRAITS:
        values = values[-1:]
    query = TraitQuery()
    for value in values:
        query = query.merge(parse_required_value(value, version))
    return query


# --- member_of -------------------------------------------------------------------

def parse_member_of_value(value, version):
    """Parse one `member_of` occurrence -> (frozenset of aggregates, forbidden?)."""
    forbidden = value.startswith("!")
    if forbidden and version < FORBIDDEN_AGGREGATES:
        raise InvalidQuery(
            "Forbidden member_of parameters are not supported in the specified microversion")
    if "," in value and not (value.startswith("in:") or value.startswith("!in:")):
        raise InvalidQuery(
            "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' "
            f"keyword using the valid microversion. Got: {value}")
    body = value[1:] if forbidden else value
    if body.startswith("in:"):
        body = body[3:]
    aggregates = body.split(",")
    for aggregate in aggregates:
        if not is_uuid_like(aggregate):
            raise InvalidQuery(
                "Invalid query string parameters: Expected 'member_of' parameter to "
                f"contain valid UUID(s). Got: {aggregate}")
    return frozenset(aggregates), forbidden


def parse_member_of(values, version, key="member_of"):
    """Parse every occurrence of `member_of` (or a suffixed `member_of{S}` key).

    Below 1.24 more than one occurrence is a 400 naming `key`.
    """
    values = list(values)
    if len(values) > 1 and version < MEMBER_OF_REPEATED:
        raise InvalidQuery(f"Multiple {key} parameters are not supported")
    any_of, forbidden = [], set()
    for value in values:
        aggregates, negated = parse_member_of_value(value, version)
        if negated:
            forbidden |= aggregates
        elif aggregates not in any_of:
            any_of.append(aggregates)
    return AggregateQuery(any_of=tuple(any_of), forbidden=frozenset(forbidden))
