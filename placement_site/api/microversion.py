"""Microversion negotiation: the OpenStack-API-Version header (http.md §4)."""
from functools import total_ordering

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


class InvalidVersion(Exception):
    """The header is malformed (400)."""


class UnacceptableVersion(Exception):
    """The header names a version outside MIN..MAX (406)."""


def requested_version_string(header_value):
    """Pick the placement entry out of an OpenStack-API-Version header value.

    Items are walked from last to first; the first `placement <version>` wins.
    Returns None when there is no placement entry.
    """
    if not header_value:
        return None
    for item in reversed(header_value.split(",")):
        parts = item.strip().split(None, 1)
        if len(parts) != 2:
            continue
        service, version = parts
        if service.lower() == SERVICE_TYPE:
            return version.strip()
    return None


def negotiate(header_value):
    """Return the Version a request is served at, or raise Invalid/Unacceptable."""
    text = requested_version_string(header_value)
    if text is None:
        return MIN
    if text == "latest":
        return MAX
    try:
        major, minor = text.split(".", 1)
        version = Version(int(major), int(minor))
    except ValueError:
        raise InvalidVersion(f"invalid version string: {text}")
    if not MIN <= version <= MAX:
        raise UnacceptableVersion(f"Unacceptable version header: {version}")
    return version


class PlacementVersioning(BaseVersioning):
    """DRF hook: request.version is the Version the middleware negotiated."""

    def determine_version(self, request, *args, **kwargs):
        return getattr(request._request, "placement_version", MIN)
