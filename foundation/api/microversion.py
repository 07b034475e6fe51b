"""Microversion negotiation: the OpenStack-API-Version header (http.md §4)."""
from functools import lru_cache, total_ordering

import microversion_parse
from django.conf import settings
from rest_framework.versioning import BaseVersioning

SERVICE_TYPE = "placement"
HEADER = "OpenStack-API-Version"

# What each microversion introduced (microversions.md); gate behaviour on these names.
PROVIDER_AGGREGATES = (1, 1)         # GET/PUT /resource_providers/{uuid}/aggregates
RESOURCE_CLASSES = (1, 2)            # /resource_classes
PROVIDERS_MEMBER_OF = (1, 3)         # GET /resource_providers?member_of=
PROVIDERS_RESOURCES = (1, 4)         # GET /resource_providers?resources=
DELETE_ALL_INVENTORIES = (1, 5)      # DELETE /resource_providers/{uuid}/inventories
TRAITS = (1, 6)                      # /traits, /resource_providers/{uuid}/traits
RESOURCE_CLASS_PUT_CREATES = (1, 7)  # PUT /resource_classes/{name}: create-or-verify
ALLOCATION_PROJECT_USER = (1, 8)     # PUT /allocations/{c} requires project_id, user_id
USAGES = (1, 9)                      # GET /usages
ALLOCATION_CANDIDATES = (1, 10)      # GET /allocation_candidates
PROVIDER_ALLOCATIONS_LINK = (1, 11)  # provider links gain "allocations"
DICT_ALLOCATIONS = (1, 12)           # allocations as {rp_uuid: {"resources": ...}}
POST_ALLOCATIONS = (1, 13)           # POST /allocations
NESTED_PROVIDERS = (1, 14)           # parent/root provider uuids, ?in_tree=
CACHE_HEADERS = (1, 15)              # Last-Modified, Cache-Control: no-cache
CANDIDATES_LIMIT = (1, 16)           # GET /allocation_candidates?limit=
CANDIDATES_REQUIRED = (1, 17)        # ...?required=; provider_summaries gain traits
PROVIDERS_REQUIRED = (1, 18)         # GET /resource_providers?required=
AGGREGATES_GENERATION = (1, 19)      # aggregates payloads carry the provider generation
CREATE_RETURNS_PROVIDER = (1, 20)    # POST /resource_providers answers 200 with the body
CANDIDATES_MEMBER_OF = (1, 21)       # GET /allocation_candidates?member_of=
FORBIDDEN_TRAITS = (1, 22)           # !TRAIT in required
ERROR_CODES = (1, 23)                # error bodies gain "code"
MEMBER_OF_REPEATED = (1, 24)         # member_of may be repeated (ANDed)
GRANULAR_GROUPS = (1, 25)            # resourcesN, requiredN, member_ofN, group_policy
ZERO_CAPACITY = (1, 26)              # inventory reserved may equal total
ALL_CLASSES_IN_SUMMARIES = (1, 27)   # provider_summaries list every class
CONSUMER_GENERATIONS = (1, 28)       # consumer_generation in allocation writes and reads
NESTED_CANDIDATES = (1, 29)          # candidates span a tree; summaries show whole trees
RESHAPER = (1, 30)                   # POST /reshaper
CANDIDATES_IN_TREE = (1, 31)         # in_tree / in_treeN on allocation candidates
FORBIDDEN_AGGREGATES = (1, 32)       # member_of=!agg, !in:
STRING_SUFFIXES = (1, 33)            # group suffixes [a-zA-Z0-9_-]{1,64}
MAPPINGS = (1, 34)                   # allocation_requests gain mappings
ROOT_REQUIRED = (1, 35)              # GET /allocation_candidates?root_required=
SAME_SUBTREE = (1, 36)               # ...?same_subtree=, resourceless groups
REPARENT = (1, 37)                   # PUT /resource_providers/{uuid} may change the parent
CONSUMER_TYPES = (1, 38)             # consumer_type
ANY_OF_TRAITS = (1, 39)              # required=in:T1,T2, repeated required

# Beyond Placement, served only when [placement] extensions names one (else the maximum
# stays Placement's 1.39): root_member_of, isolate (docs/clients/extensions.md).
EXTENSIONS = (1, 40)

MIN_VERSION = (1, 0)
MAX_VERSION = ANY_OF_TRAITS


@total_ordering
class Version:
    """A comparable microversion; compares with Version or (major, minor) tuples."""

    __slots__ = ("major", "minor")

    def __init__(self, major, minor):
        self.major = major
        self.minor = minor

    @classmethod
    def parse(cls, text):
        major, minor = str(text).split(".", 1)
        return cls(int(major), int(minor))

    def _key(self, other):
        if isinstance(other, Version):
            return (other.major, other.minor)
        if isinstance(other, str):
            other = Version.parse(other)
            return (other.major, other.minor)
        return tuple(other)

    def __eq__(self, other):
        return (self.major, self.minor) == self._key(other)

    def __lt__(self, other):
        return (self.major, self.minor) < self._key(other)

    def __hash__(self):
        return hash((self.major, self.minor))

    def __str__(self):
        return f"{self.major}.{self.minor}"

    __repr__ = __str__

    def matches(self, min_version=None, max_version=None):
        """True when min_version <= self <= max_version (either bound optional)."""
        if min_version is not None and self < min_version:
            return False
        if max_version is not None and self > max_version:
            return False
        return True


MIN = Version(*MIN_VERSION)
MAX = Version(*MAX_VERSION)     # Placement's maximum
EXTENDED = Version(*EXTENSIONS)


def latest():
    """The highest version served (what `latest` means): EXTENDED when an extension is
    on, else Placement's MAX."""
    return EXTENDED if settings.PLACEMENT_EXTENSIONS else MAX


@lru_cache(maxsize=2)
def versions(highest=MAX):
    """Every version served up to `highest`, earliest first, as microversion-parse
    wants them."""
    return [str(Version(MIN.major, minor)) for minor in range(MIN.minor, highest.minor + 1)]


VERSIONS = versions()   # Placement's


class InvalidVersion(Exception):
    """The header is malformed (400)."""


class UnacceptableVersion(Exception):
    """The header names a version outside MIN..latest() (406)."""


def negotiate(header_value):
    """Return the Version a request with this OpenStack-API-Version header value is
    served at, or raise InvalidVersion (400) / UnacceptableVersion (406).

    microversion-parse gives Placement's exact rules (http.md §4.1): the last
    `placement <version>` item wins, no entry means the minimum, `latest` the maximum,
    `major.minor` is parsed as two integers and must be one of versions(latest()).
    """
    try:
        found = microversion_parse.extract_version(
            {HEADER: header_value or ""}, SERVICE_TYPE, versions(latest()))
    except TypeError as exc:     # not two integers
        raise InvalidVersion(str(exc))
    except ValueError as exc:    # outside VERSIONS
        raise UnacceptableVersion(str(exc))
    return Version(found.major, found.minor)


class PlacementVersioning(BaseVersioning):
    """DRF hook: request.version is the Version the middleware negotiated."""

    def determine_version(self, request, *args, **kwargs):
        return getattr(request._request, "placement_version", MIN)
