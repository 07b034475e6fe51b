"""What clients can see of a Placement database, as comparable fingerprints.

Each view is one SQL query against Placement's schema and one against ours
(same table names, some column names differ; where only the provider link
column does, the query is written once, see same_query), yielding rows keyed
by uuids and names only: ids never mean anything outside their database. A
view's fingerprint is (row count, sum of row hashes mod 2**64), so it is
independent of row order and collation and is computed while streaming, in
memory bounded by one batch.

Only rows the import keeps appear in the source views: inner joins drop the
rows whose provider, class, trait, aggregate, consumer, project or user is gone
(what --skip-invalid skips). Roots are left out: they follow from the parent
chain, and `placement_status` checks our trees.
"""
import hashlib
from dataclasses import dataclass
from datetime import datetime

from allocations.upstream.dbapi import to_utc
from providers.rules import CUSTOM_PREFIX

EPOCH = datetime(1970, 1, 1)
MASK = (1 << 64) - 1

# A consumer the import keeps: its project and user rows exist, and its type if it has one.
SOURCE_CONSUMER_JOINS = """
LEFT JOIN projects p ON p.id = c.project_id
LEFT JOIN users u ON u.id = c.user_id
LEFT JOIN consumer_types ct ON ct.id = c.consumer_type_id
"""
SOURCE_CONSUMER_OK = ("(p.id IS NOT NULL AND u.id IS NOT NULL "
                      "AND (c.consumer_type_id IS NULL OR ct.id IS NOT NULL))")
IS_CUSTOM = f"SUBSTR(name, 1, {len(CUSTOM_PREFIX)}) = '{CUSTOM_PREFIX}'"  # rules.is_custom()



def same_query(sql, kinds):
    """A view whose query reads alike in both schemas but for the provider link column,
    written once as `{rp}`: resource_provider_id in Placement's, provider_id in ours."""
    return (sql.format(rp="resource_provider_id"), sql.format(rp="provider_id"), kinds)


# view name -> (query on Placement's schema, query on ours, kinds of the row's values)
# kinds: s string, i integer, f float, t timestamp (created_at: the import writes
# the first of created_at, updated_at, the epoch), T timestamp (may stay NULL)
VIEWS = {
    "resource_providers": (
        """SELECT rp.uuid, rp.name, rp.generation, pp.uuid, rp.created_at, rp.updated_at
           FROM resource_providers rp
           LEFT JOIN resource_providers pp ON pp.id = rp.parent_provider_id""",
        """SELECT rp.uuid, rp.name, rp.generation, pp.uuid, rp.created_at, rp.updated_at
           FROM resource_providers rp
           LEFT JOIN resource_providers pp ON pp.id = rp.parent_id""",
        "ssisTT"),
    "inventories": same_query(
        """SELECT rp.uuid, rc.name, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size,
                  i.allocation_ratio, i.created_at, i.updated_at
           FROM inventories i
           JOIN resource_providers rp ON rp.id = i.{rp}
           JOIN resource_classes rc ON rc.id = i.resource_class_id""",
        "ssiiiiiftT"),
    "custom resource classes": same_query(
        f"SELECT name, created_at, updated_at FROM resource_classes WHERE {IS_CUSTOM}", "stT"),
    "custom traits": same_query(
        f"SELECT name, created_at, updated_at FROM traits WHERE {IS_CUSTOM}", "stT"),
    "provider traits": same_query(
        """SELECT rp.uuid, t.name, x.created_at FROM resource_provider_traits x
           JOIN resource_providers rp ON rp.id = x.{rp}
           JOIN traits t ON t.id = x.trait_id""",
        "sst"),
    "aggregates": (
        "SELECT uuid, created_at FROM placement_aggregates WHERE uuid IS NOT NULL",
        "SELECT uuid, created_at FROM placement_aggregates",
        "st"),
    "provider aggregates": same_query(
        """SELECT rp.uuid, a.uuid FROM resource_provider_aggregates x
           JOIN resource_providers rp ON rp.id = x.{rp}
           JOIN placement_aggregates a ON a.id = x.aggregate_id""",
        "ss"),
    "projects": same_query("SELECT external_id FROM projects", "s"),
    "users": same_query("SELECT external_id FROM users", "s"),
    "consumer types": same_query("SELECT name, created_at FROM consumer_types", "st"),
    "consumers": (
        f"""SELECT c.uuid, p.external_id, u.external_id, ct.name, c.generation,
                   c.created_at, c.updated_at
            FROM consumers c {SOURCE_CONSUMER_JOINS} WHERE {SOURCE_CONSUMER_OK}""",
        """SELECT c.uuid, p.external_id, u.external_id, ct.name, c.generation,
                  c.created_at, c.updated_at
           FROM consumers c JOIN projects p ON p.id = c.project_id
           JOIN users u ON u.id = c.user_id
           LEFT JOIN consumer_types ct ON ct.id = c.consumer_type_id""",
        "ssssitT"),
    "allocations": (
        f"""SELECT rp.uuid, rc.name, c.uuid, a.used, a.created_at, a.updated_at
            FROM allocations a
            JOIN resource_providers rp ON rp.id = a.resource_provider_id
            JOIN resource_classes rc ON rc.id = a.resource_class_id
            JOIN consumers c ON c.uuid = a.consumer_id {SOURCE_CONSUMER_JOINS}
            WHERE {SOURCE_CONSUMER_OK}""",
        """SELECT rp.uuid, rc.name, c.uuid, a.used, a.created_at, a.updated_at
           FROM allocations a
           JOIN resource_providers rp ON rp.id = a.provider_id
           JOIN resource_classes rc ON rc.id = a.resource_class_id
           JOIN consumers c ON c.id = a.consumer_id""",
        "sssitT"),
    "usage per provider and class": (
        f"""SELECT rp.uuid, rc.name, SUM(a.used)
            FROM allocations a
            JOIN resource_providers rp ON rp.id = a.resource_provider_id
            JOIN resource_classes rc ON rc.id = a.resource_class_id
            JOIN consumers c ON c.uuid = a.consumer_id {SOURCE_CONSUMER_JOINS}
            WHERE {SOURCE_CONSUMER_OK}
            GROUP BY rp.uuid, rc.name""",
        """SELECT rp.uuid, rc.name, SUM(a.used)
           FROM allocations a
           JOIN resource_providers rp ON rp.id = a.provider_id
           JOIN resource_classes rc ON rc.id = a.resource_class_id
           GROUP BY rp.uuid, rc.name""",
        "ssi"),
}


def canonical(row, kinds):
    """One view row as a tuple that reads the same from every driver."""
    values = []
    for value, kind in zip(row, kinds):
        if kind == "i":
            value = int(value) if value is not None else 0  # a NULL generation serves as 0
        elif kind == "f":
            value = repr(float(value))
        elif kind == "t":
            value = (to_utc(value) or EPOCH).isoformat()
        elif kind == "T":
            value = to_utc(value).isoformat() if value is not None else None
        values.append(value)
    return tuple(values)


def created_stamp(created_at, updated_at):
    """What the import writes for a NULL created_at (our column is NOT NULL)."""
    return to_utc(created_at) or to_utc(updated_at) or EPOCH


def _row_hash(values):
    return int.from_bytes(hashlib.blake2b(repr(values).encode(), digest_size=8).digest(), "big")


@dataclass(frozen=True)
class Fingerprint:
    rows: int
    digest: int


class Accumulator:
    """A view's fingerprint built row by row (the import feeds it while writing)."""

    def __init__(self, name):
        self.kinds = VIEWS[name][2]
        self.rows = 0
        self.digest = 0

    def add(self, row):
        self.rows += 1
        self.digest = (self.digest + _row_hash(canonical(row, self.kinds))) & MASK

    def result(self):
        return Fingerprint(self.rows, self.digest)


def fingerprint(batches, kinds):
    rows, digest = 0, 0
    for batch in batches:
        for row in batch:
            rows += 1
            digest = (digest + _row_hash(canonical(row, kinds))) & MASK
    return Fingerprint(rows, digest)


def view_rows(batches, kinds):
    """All canonical rows of a view (only to name differences once a check failed)."""
    return {canonical(row, kinds) for batch in batches for row in batch}


def source_fingerprints(database, batch_size=5000, known=None):
    """Fingerprints of every source view; `known` ones (computed while importing) are kept."""
    known = known or {}
    return {name: known.get(name) or fingerprint(
                database.stream(source_sql, batch_size=batch_size), kinds)
            for name, (source_sql, _, kinds) in VIEWS.items()}


def target_fingerprints(connection, batch_size=5000):
    return {name: fingerprint(django_stream(connection, target_sql, batch_size), kinds)
            for name, (_, target_sql, kinds) in VIEWS.items()}


def django_stream(connection, sql, batch_size):
    # chunked_cursor is a server-side cursor on PostgreSQL: memory stays one batch.
    with connection.chunked_cursor() as cursor:
        cursor.execute(sql)
        while True:
            rows = cursor.fetchmany(batch_size)
            if not rows:
                break
            yield rows


def first_differences(database, connection, name, limit=5):
    """A few rows that differ between source and target in view `name`."""
    source_sql, target_sql, kinds = VIEWS[name]
    source = view_rows(database.stream(source_sql), kinds)
    target = view_rows(django_stream(connection, target_sql, 5000), kinds)
    lines = [f"only in source: {row}" for row in sorted(source - target, key=repr)[:limit]]
    lines += [f"only in target: {row}" for row in sorted(target - source, key=repr)[:limit]]
    return lines
