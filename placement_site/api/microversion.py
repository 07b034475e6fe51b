"""Microversion negotiation: the OpenStack-API-Version header (http.md §4)."""
from functools import total_ordering

import microversion_parse
from rest_framework.versioning import BaseVersioning

SERVICE_TYPE = "placement"
HEADER = "OpenStack-API-Version"
MIN_VERSION = (1, 0)
MAX_VERSION = (1, 39)


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
MAX = Version(*MAX_VERSION)
# every version served, earliest first, as microversion-parse wants them
VERSIONS = [str(Version(MIN.major, minor)) for minor in range(MIN.minor, MAX.minor + 1)]


class InvalidVersion(Exception):
    """The header is malformed (400)."""


class UnacceptableVersion(Exception):
    """The header names a version outside MIN..MAX (406)."""


def negotiate(header_value):
    """Return the Version a request with this OpenStack-API-Version header value is
    served at, or raise InvalidVersion (400) / UnacceptableVersion (406).

    microversion-parse gives Placement's exact rules (http.md §4.1): the last
    `placement <version>` item wins, no entry means the minimum, `latest` the maximum,
    `major.minor` is parsed as two integers and must be one of VERSIONS.
    """
    try:
        found = microversion_parse.extract_version(
            {HEADER: header_value or ""}, SERVICE_TYPE, VERSIONS)
    except TypeError as exc:     # not two integers
        raise InvalidVersion(str(exc))
    except ValueError as exc:    # outside VERSIONS
        raise UnacceptableVersion(str(exc))
    return Version(found.major, found.minor)


class PlacementVersioning(BaseVersioning):
    """DRF hook: request.version is the Version the middleware negotiated."""

    def determine_version(self, request, *args, **kwargs):
        return getattr(request._request, "placement_version", MIN)
