"""Parse GET /allocation_candidates query strings into request groups.

Pure code (no database): ``parse_request(query, version)`` takes the query
(a Django QueryDict or any mapping of key -> list of values, in query-string
order) and the request's microversion and returns a ParsedRequest
(``parse_query_string`` does the same for a raw query string, and remembers):

* ``query``: a frozen CandidateQuery the engine evaluates. It never carries
  the microversion; the few behaviours that depend on it are flags
  (``nested_aware``);
* ``view``: a frozen ResponseView telling present.py how to render.

Validation follows allocation-candidates.md §3 in its order: the query
schema (§3.2), request-wide parameters (§3.3), group parameters (§3.4), group
consistency (§3.5). Names are not resolved here (§3.6 happens in the engine,
lazily). Value grammars for ``resources``, ``required`` and ``member_of`` come from
providers.query_params (shared with GET /resource_providers). The opt-in extensions
(docs/clients/extensions.md) add `root_member_of` and `isolate` at EXTENSIONS (1.40),
each only when named in `extensions`.
"""
import re
from dataclasses import dataclass, field
from functools import lru_cache

from django.http import QueryDict

from candidates.candidate_set import GroupKind
from candidates.exceptions import InvalidCandidatesQuery
from foundation import domain_errors as errors
from foundation import jsonschemas
from foundation.api.microversion import (
    ALL_CLASSES_IN_SUMMARIES,
    CANDIDATES_IN_TREE,
    CANDIDATES_LIMIT,
    CANDIDATES_MEMBER_OF,
    CANDIDATES_REQUIRED,
    DICT_ALLOCATIONS,
    EXTENSIONS,
    FORBIDDEN_TRAITS,
    GRANULAR_GROUPS,
    MAPPINGS,
    NESTED_CANDIDATES,
    ROOT_REQUIRED,
    SAME_SUBTREE,
    STRING_SUFFIXES,
    Version,
)
from foundation.uuids import canonical_uuid_or_none
from providers.query_params import (
    AggregateQuery,
    TraitQuery,
    parse_member_of,
    parse_required,
    parse_required_value,
    parse_resources,
)
from providers.rules import GROUP_SUFFIX_FORM, GROUP_SUFFIX_REGEX

NUMERIC_SUFFIX, NUMERIC_SUFFIX_FORM = "[1-9][0-9]*", "a whole number from 1"
STRING_SUFFIX = GROUP_SUFFIX_REGEX
_KEY_RE = re.compile(r"^(resources|required|member_of|in_tree)(.*)$")
LIMIT_PATTERN = "^[1-9][0-9]*$"
GROUP_POLICIES = ["none", "isolate"]
ROOT_MEMBER_OF, ISOLATE = "root_member_of", "isolate"   # the opt-in extensions
QUERY_PREFIX = "Invalid query string parameters: "


@dataclass(frozen=True)
class RequestGroup(GroupKind):
    """One request group: suffix "" is the unsuffixed group.

    resources: ((class name, amount), ...) in query order.
    traits: providers.query_params.TraitQuery; aggregates: AggregateQuery.
    in_tree: canonical uuid string or None.
    """

    suffix: str
    resources: tuple = ()
    traits: TraitQuery = field(default_factory=TraitQuery)
    aggregates: AggregateQuery = field(default_factory=AggregateQuery)
    in_tree: str = None

    AMOUNTS = "resources"

    @property
    def required_sets(self):
        """Positive trait conditions as any-of sets of names (ANDed)."""
        return tuple(self.traits.required_sets())

    @property
    def forbidden(self):
        return self.traits.forbidden


@dataclass(frozen=True)
class CandidateQuery:
    """What the engine evaluates; knows nothing of microversions."""

    groups: tuple
    isolate: tuple = ()               # suffixes of the groups kept on distinct providers
    isolate_parameter: bool = False   # isolate came from `isolate`, not group_policy
    limit: int = None
    root_required: frozenset = frozenset()
    root_forbidden: frozenset = frozenset()
    root_member_of: AggregateQuery = field(default_factory=AggregateQuery)
    same_subtree: tuple = ()          # tuple of tuples of suffixes
    nested_aware: bool = True         # NESTED_CANDIDATES: several providers of one tree

    def requested_class_names(self):
        names = []
        for group in self.groups:
            for name, _ in group.resources:
                if name not in names:
                    names.append(name)
        return names


@dataclass(frozen=True)
class ResponseView:
    """How present.py renders the result (one flag per microversion change)."""

    dict_allocations: bool = True     # DICT_ALLOCATIONS
    traits: bool = True               # CANDIDATES_REQUIRED
    all_classes: bool = True          # ALL_CLASSES_IN_SUMMARIES
    tree_summaries: bool = True       # NESTED_CANDIDATES: whole trees + parent/root uuids
    mappings: bool = True             # MAPPINGS


@dataclass(frozen=True)
class ParsedRequest:
    query: CandidateQuery
    view: ResponseView


# --- §3.2 schema -------------------------------------------------------------------


def group_suffix_rule(version):
    """(regex, the same in words) of a request group's suffix (`resources{S}`) at
    `version`: a number below 1.33, then GROUP_SUFFIX_REGEX."""
    if version >= STRING_SUFFIXES:
        return STRING_SUFFIX, GROUP_SUFFIX_FORM
    return NUMERIC_SUFFIX, NUMERIC_SUFFIX_FORM


def query_schema(version, extensions=frozenset()):
    """The JSON schema of the query string (last value of each key) at `version`, with
    the opt-in `extensions` that are on."""
    if version < GRANULAR_GROUPS:
        properties = {"resources": {"type": "string"}}
        if version >= CANDIDATES_LIMIT:
            properties["limit"] = {"type": "string", "pattern": LIMIT_PATTERN}
        if version >= CANDIDATES_REQUIRED:
            properties["required"] = {"type": "string"}
        if version >= CANDIDATES_MEMBER_OF:
            properties["member_of"] = {"type": "string"}
        return {"type": "object", "properties": properties, "required": ["resources"],
                "additionalProperties": False}
    suffix = group_suffix_rule(version)[0]
    prefixes = ["resources", "required", "member_of"]
    if version >= CANDIDATES_IN_TREE:
        prefixes.append("in_tree")
    properties = {
        "limit": {"type": "string", "pattern": LIMIT_PATTERN},
        "group_policy": {"type": "string", "enum": GROUP_POLICIES},
    }
    if version >= ROOT_REQUIRED:
        properties["root_required"] = {"type": "string"}
    if version >= SAME_SUBTREE:
        properties["same_subtree"] = {"type": "string"}
    if version >= EXTENSIONS:
        for name in (ROOT_MEMBER_OF, ISOLATE):
            if name in extensions:
                properties[name] = {"type": "string"}
    return {
        "type": "object",
        "properties": properties,
        "patternProperties": {f"^{p}({suffix})?$": {"type": "string"} for p in prefixes},
        "additionalProperties": False,
    }


@lru_cache(maxsize=None)
def _query_schema(version_key, extensions):
    """One query schema object per microversion (jsonschemas keeps its validator)."""
    return query_schema(Version(*version_key), extensions)


_FIRST_VALUE_SCHEMA = {
    "properties": {"limit": {"type": "string", "pattern": LIMIT_PATTERN},
                   "group_policy": {"type": "string", "enum": GROUP_POLICIES}}}


def validate(schema, data):
    """jsonschema validation with Placement's query-string message."""
    error = jsonschemas.first_error(data, schema)
    if error is not None:
        raise InvalidCandidatesQuery(f"{QUERY_PREFIX}{error}")


def _lists(query):
    """key -> [values] in first-appearance order, from a QueryDict or a mapping."""
    if hasattr(query, "lists"):
        return dict(query.lists())
    return {key: list(values) if isinstance(values, (list, tuple)) else [values]
            for key, values in query.items()}


# --- §3.3 request-wide parameters ----------------------------------------------------


def _first_values(lists):
    """limit and group_policy use their FIRST occurrence (the schema saw the last)."""
    limit = group_policy = None
    if "limit" in lists:
        first = lists["limit"][0]
        validate(_FIRST_VALUE_SCHEMA, {"limit": first})
        limit = int(first)
    if "group_policy" in lists:
        first = lists["group_policy"][0]
        validate(_FIRST_VALUE_SCHEMA, {"group_policy": first})
        group_policy = first
    return limit, group_policy


def parse_root_required(values):
    """`root_required` (1.35+): once only, `T,!T` syntax of 1.22, never `in:` (Quirk Q1)."""
    if not values:
        return TraitQuery()
    if len(values) > 1:
        raise InvalidCandidatesQuery(
            "Query parameter 'root_required' may be specified only once.",
            code=errors.QUERYPARAM_DUPLICATE_KEY)
    traits = parse_required_value(values[0], FORBIDDEN_TRAITS)
    conflicts = sorted(traits.required & traits.forbidden)
    if conflicts:
        raise InvalidCandidatesQuery(
            "Conflicting required and forbidden traits found in root_required: "
            + ", ".join(conflicts), code=errors.QUERYPARAM_BAD_VALUE)
    return traits


def _suffix_list(value, param):
    """One occurrence of a list of suffixes (same_subtree, isolate): its distinct elements,
    stripped, in order; an empty one would name the unsuffixed group: refused."""
    suffixes = []
    for element in value.split(","):
        element = element.strip()
        if not element:
            raise InvalidCandidatesQuery(
                f"Empty string (unsuffixed group) can not be specified in `{param}` ",
                code=errors.QUERYPARAM_BAD_VALUE)
        if element not in suffixes:
            suffixes.append(element)
    return tuple(suffixes)


def parse_same_subtree(values):
    """Each occurrence is one constraint: a tuple of distinct suffixes."""
    return tuple(_suffix_list(value, "same_subtree") for value in values)


def parse_isolate(values, group_policy):
    """`isolate` (extension): the union of its occurrences' suffixes, in order of first
    appearance; never beside group_policy, which it replaces."""
    suffixes = []
    for value in values:
        suffixes.extend(s for s in _suffix_list(value, ISOLATE) if s not in suffixes)
    if values and group_policy is not None:
        raise InvalidCandidatesQuery("The `isolate` and `group_policy` parameters can not "
                                     "be specified together.",
                                     code=errors.QUERYPARAM_BAD_VALUE)
    return tuple(suffixes)


# --- §3.4 group parameters -----------------------------------------------------------


def parse_in_tree(value):
    value = value.strip()
    canonical = canonical_uuid_or_none(value)
    if canonical is None:
        raise InvalidCandidatesQuery(
            f"{QUERY_PREFIX}Expected 'in_tree' parameter to be a format of uuid. Got: {value}")
    return canonical


def _parse_groups(lists, version):
    """Build the groups in the order their suffix first appears."""
    parts = {}
    for key, values in lists.items():
        match = _KEY_RE.match(key)
        if not match:
            continue
        prefix, suffix = match.groups()
        group = parts.setdefault(suffix, {})
        if prefix == "resources":
            for value in values:
                group["resources"] = tuple(parse_resources(value).items())
        elif prefix == "required":
            group["traits"] = parse_required(values, version)
        elif prefix == "member_of":
            group["aggregates"] = parse_member_of(values, version, key=key)
        else:
            for value in values:
                group["in_tree"] = parse_in_tree(value)
    return [RequestGroup(suffix=suffix, **fields) for suffix, fields in parts.items()]


# --- §3.5 group consistency -----------------------------------------------------------


def _orphaned(groups, param, attribute):
    """The `param{suffix}` keys, comma-separated, of the resourceless groups that have
    `attribute` (below SAME_SUBTREE a group that filters must also ask for resources)."""
    return ", ".join(f"{param}{g.suffix}" for g in groups
                     if g.resourceless and getattr(g, attribute))


def _check_groups(groups, same_subtree, group_policy, version, isolate=()):
    if version >= SAME_SUBTREE:
        if all(group.resourceless for group in groups):
            raise InvalidCandidatesQuery(
                "There must be at least one resources or resources[$S] parameter.",
                code=errors.QUERYPARAM_MISSING_VALUE)
        in_subtree = {suffix for constraint in same_subtree for suffix in constraint}
        orphans = [g.suffix for g in groups if g.resourceless and g.suffix not in in_subtree]
        if orphans:
            raise InvalidCandidatesQuery(
                "Resourceless suffixed group request should be specified in `same_subtree` "
                f"query param: bad group(s) - {orphans}.", code=errors.QUERYPARAM_BAD_VALUE)
        known = [g.suffix for g in groups]
        unknown = [s for c in same_subtree for s in c if s not in known]
        if unknown:
            raise InvalidCandidatesQuery(
                f"Real suffixes should be specified in `same_subtree`: {unknown} not found "
                f"in {known}.", code=errors.QUERYPARAM_BAD_VALUE)
        unknown = [s for s in isolate if s not in known]
        if unknown:
            raise InvalidCandidatesQuery(
                f"Real suffixes should be specified in `isolate`: {unknown} not found "
                f"in {known}.", code=errors.QUERYPARAM_BAD_VALUE)
    else:
        orphans = _orphaned(groups, "required", "required_sets")
        if orphans:
            raise InvalidCandidatesQuery(
                "All traits parameters must be associated with resources.  "
                "Found the following orphaned traits keys: " + orphans)
        orphans = _orphaned(groups, "member_of", "aggregates")
        if orphans:
            raise InvalidCandidatesQuery(
                "All member_of parameters must be associated with resources. "
                "Found the following orphaned member_of keys: " + orphans)
        if any(g.resourceless for g in groups):
            raise InvalidCandidatesQuery("All request groups must specify resources.")
        if not groups:
            raise InvalidCandidatesQuery(
                "At least one request group (`resources` or `resources{$S}`) "
                "is required.")
    conflicts = []
    for group in groups:
        clashing = sorted({name for names in group.required_sets
                           if names <= group.forbidden for name in names})
        if clashing:
            conflicts.append(f"required{group.suffix}: ({', '.join(clashing)})")
    if conflicts:
        raise InvalidCandidatesQuery(
            "Conflicting required and forbidden traits found in the following "
            "traits keys: " + ", ".join(conflicts))
    if group_policy is None and not isolate and sum(1 for g in groups if g.suffixed) > 1:
        raise InvalidCandidatesQuery(
            'The "group_policy" parameter is required when specifying more '
            'than one "resources{N}" parameter.')


# --- entry points ------------------------------------------------------------------------


@lru_cache(maxsize=256)
def parse_query_string(query_string, version, extensions=frozenset()):
    """parse_request() of a WSGI QUERY_STRING (its bytes as latin-1, PEP 3333; decoded as
    Django decodes request.GET), remembered: a scheduler asks the same few queries (one
    per flavor) over and over, and a ParsedRequest is immutable. A refused query raises
    each time (nothing is remembered of it)."""
    return parse_request(QueryDict(query_string.encode("iso-8859-1")), version, extensions)


def parse_request(query, version, extensions=frozenset()):
    """Validate and parse the query string of GET /allocation_candidates.

    extensions: the names of the opt-in extensions that are on (candidates.options).

    Raises InvalidCandidatesQuery (with Placement's message and code) on the first problem,
    in allocation-candidates.md §3 order.
    """
    lists = _lists(query)
    validate(_query_schema((version.major, version.minor), extensions),
             {key: values[-1] for key, values in lists.items()})
    limit, group_policy = _first_values(lists)
    root = TraitQuery()
    if version >= ROOT_REQUIRED:
        root = parse_root_required(lists.get("root_required", []))
    same_subtree = ()
    if version >= SAME_SUBTREE:
        same_subtree = parse_same_subtree(lists.get("same_subtree", []))
    # past the schema, these keys are there only when their extension is on at 1.40
    root_member_of = parse_member_of(lists.get(ROOT_MEMBER_OF, []), version,
                                     key=ROOT_MEMBER_OF)
    isolate = parse_isolate(lists.get(ISOLATE, []), group_policy)
    groups = _parse_groups(lists, version)
    _check_groups(groups, same_subtree, group_policy, version, isolate)
    if group_policy == "isolate":
        isolate = tuple(g.suffix for g in groups if g.suffixed)
    candidate_query = CandidateQuery(
        groups=tuple(groups),
        isolate=isolate,
        isolate_parameter=ISOLATE in lists,
        limit=limit,
        root_required=root.required,
        root_forbidden=root.forbidden,
        root_member_of=root_member_of,
        same_subtree=same_subtree,
        nested_aware=version >= NESTED_CANDIDATES,
    )
    view = ResponseView(
        dict_allocations=version >= DICT_ALLOCATIONS,
        traits=version >= CANDIDATES_REQUIRED,
        all_classes=version >= ALL_CLASSES_IN_SUMMARIES,
        tree_summaries=version >= NESTED_CANDIDATES,
        mappings=version >= MAPPINGS,
    )
    return ParsedRequest(query=candidate_query, view=view)
