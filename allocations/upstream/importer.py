"""import_placement_db: a Placement 16.0.0 database -> our models, exactly.

The source is read inside one snapshot. Everything is written in one
transaction with provider, aggregate, project, user, consumer type, consumer,
inventory and allocation ids kept (ids mean nothing outside their database,
but keeping them saves a lookup table per reference, so memory stays bounded
by the batch size; only the provider tree's skeleton, ids and parents, is held
to compute the nested sets). Resource classes and traits are mapped by name.
Timestamps go in as they are (raw inserts: the models' auto_now_add would
replace them). After writing, the content fingerprints of source and target
must be equal, or everything is rolled back.
"""
import io
import time
from dataclasses import dataclass, field
from datetime import timezone as dt_timezone

from django.core.management.color import no_style
from django.db import DatabaseError, connection, transaction
from tqdm import tqdm

from allocations.status_checks import (
    check_allocations_have_inventory, check_capacity,
)
from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from allocations.upstream import UpstreamError, content, schema
from allocations.upstream.dbapi import DRIVER_ERRORS, Database, one_line, to_utc
from allocations.upstream.problems import Problems, build_forest
from providers.models import (
    Aggregate, Inventory, ProviderAggregate, ProviderTrait, ResourceClass, ResourceProvider,
    Trait,
)
from providers.rules import CUSTOM_PREFIX
from providers.services import change_log

BATCH_SIZE = 5000

SKELETON = "SELECT id, parent_provider_id, root_provider_id FROM resource_providers"
PROVIDERS = ("SELECT id, uuid, name, generation, created_at, updated_at, parent_provider_id "
             "FROM resource_providers")
AGGREGATES = "SELECT id, uuid, created_at, updated_at FROM placement_aggregates"
PROVIDER_TRAITS = ("SELECT resource_provider_id, trait_id, created_at, updated_at "
                   "FROM resource_provider_traits")
PROVIDER_AGGREGATES = """
SELECT x.resource_provider_id, x.aggregate_id, a.id
FROM resource_provider_aggregates x
LEFT JOIN placement_aggregates a ON a.id = x.aggregate_id AND a.uuid IS NOT NULL"""
INVENTORIES = ("SELECT id, resource_provider_id, resource_class_id, total, reserved, min_unit, "
               "max_unit, step_size, allocation_ratio, created_at, updated_at FROM inventories")
PROJECTS = "SELECT id, external_id FROM projects"
USERS = "SELECT id, external_id FROM users"
CONSUMER_TYPES = "SELECT id, name, created_at, updated_at FROM consumer_types"
# The two large tables are fingerprinted while they are written (content.VIEWS
# "consumers", "allocations" and "usage per provider and class"), so they are read once:
# hence the names joined in, and allocations in (provider, class) order.
CONSUMERS = f"""
SELECT c.id, c.uuid, c.project_id, c.user_id, c.consumer_type_id, c.generation,
       c.created_at, c.updated_at, CASE WHEN {content.SOURCE_CONSUMER_OK} THEN 1 ELSE 0 END,
       p.external_id, u.external_id, ct.name
FROM consumers c {content.SOURCE_CONSUMER_JOINS}"""
ALLOCATIONS = f"""
SELECT a.id, a.resource_provider_id, a.resource_class_id, a.consumer_id, a.used,
       a.created_at, a.updated_at, c.id, CASE WHEN {content.SOURCE_CONSUMER_OK} THEN 1 ELSE 0 END,
       rp.uuid
FROM allocations a
LEFT JOIN resource_providers rp ON rp.id = a.resource_provider_id
LEFT JOIN consumers c ON c.uuid = a.consumer_id {content.SOURCE_CONSUMER_JOINS}
ORDER BY a.resource_provider_id, a.resource_class_id"""
STREAMED_VIEWS = ("consumers", "allocations", "usage per provider and class")

# Our tables that must be empty (standard classes and traits exist from `migrate`).
TARGET_TABLES = [ResourceProvider, Aggregate, Inventory, ProviderTrait, ProviderAggregate,
                 Project, User, ConsumerType, Consumer, Allocation]


class _Rollback(Exception):
    """Raised inside the transaction to undo it (dry run, problems, mismatch)."""


@dataclass
class ImportResult:
    verification: list = field(default_factory=list)  # (view, source rows, target rows, equal)
    problems: Problems = field(default_factory=Problems)
    streamed: dict = field(default_factory=dict)  # view -> source Fingerprint, from the write
    written: dict = field(default_factory=dict)  # our table -> rows written
    seconds: float = 0.0
    write_seconds: float = 0.0  # of `seconds`: reading and writing, before verification
    committed: bool = False
    nothing_to_do: bool = False
    differences: list = field(default_factory=list)

    @property
    def rows(self):
        return sum(self.written.values())


def check_source_schema(source):
    """Refuse anything but Placement 16.0.0's schema, before reading data."""
    found = source.table_columns()
    if "alembic_version" not in found:
        raise UpstreamError("source table 'alembic_version' is missing: not a Placement "
                            f"database of revision {schema.REVISION} ({schema.RELEASE})")
    revisions = [r[0] for r in source.all("SELECT version_num FROM alembic_version")]
    if revisions != [schema.REVISION]:
        have = ", ".join(revisions) or "none"
        raise UpstreamError(f"source schema revision is {have}; only {schema.REVISION} "
                            f"({schema.RELEASE}) is supported")
    for table in schema.TABLES:
        if table not in found:
            raise UpstreamError(f"source table {table!r} is missing")
        missing = [c for c in schema.columns(table) if c not in found[table]]
        if missing:
            raise UpstreamError(f"source table {table!r} lacks column(s) {', '.join(missing)}")


def target_contents():
    """{what: count} of the rows that make our database non-empty."""
    counts = {model._meta.db_table: model.objects.count() for model in TARGET_TABLES}
    counts["custom resource_classes"] = ResourceClass.objects.filter(
        name__startswith=CUSTOM_PREFIX).count()
    counts["custom traits"] = Trait.objects.filter(name__startswith=CUSTOM_PREFIX).count()
    return {name: n for name, n in counts.items() if n}


def import_database(url, *, dry_run=False, skip_invalid=False, batch_size=BATCH_SIZE,
                    progress=None, keep=True):
    """Import the Placement database at `url` into ours. Returns an ImportResult.

    keep=False rolls back even a successful import (the benchmark).
    Raises UpstreamError for anything that stops the import (nothing written).
    """
    started = time.monotonic()
    source = Database(url)
    try:
        check_source_schema(source)
        source.begin_snapshot()
        result = ImportResult()
        existing = target_contents()
        if existing:
            _compare_with_existing(source, existing, result, batch_size)
            return result
        try:
            with transaction.atomic():
                _write_everything(source, result, skip_invalid, batch_size, progress)
                result.write_seconds = time.monotonic() - started
                if result.problems.stops_import(skip_invalid):
                    raise _Rollback()
                _verify(source, result, batch_size)
                if not all(equal for *_, equal in result.verification):
                    raise _Rollback()
                if dry_run or not keep:
                    raise _Rollback()
                # One change log entry for the whole import, not one per row.
                change_log.change_record(
                    kind=change_log.DATABASE, entity="placement", action="import",
                    after={"source": source.dialect, "rows": dict(result.written)})
                _refresh_planner_statistics()
                result.committed = True
        except _Rollback:
            pass
        except (DatabaseError, *DRIVER_ERRORS) as exc:  # e.g. duplicate allocation rows,
            # which Placement allows (COPY raises psycopg2's own errors)
            raise UpstreamError(f"writing into this database failed, nothing was written: "
                                f"{one_line(exc)}")
        result.seconds = time.monotonic() - started
        return result
    finally:
        source.end()
        source.close()


def _refresh_planner_statistics():
    """PostgreSQL plans the first requests after the switch-over from the statistics of
    empty tables until autovacuum analyzes the new rows (never, where it is off), so
    read them now. ANALYZE runs inside the import's transaction and counts its rows.
    MySQL/MariaDB: nothing to do; InnoDB's persistent statistics are recounted by the
    server itself once a tenth of a table's rows have changed, as an import does."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def _compare_with_existing(source, existing, result, batch_size):
    what = ", ".join(f"{n} {name}" for name, n in existing.items())
    theirs = content.source_fingerprints(source, batch_size)
    ours = content.target_fingerprints(connection, batch_size)
    if theirs != ours:
        raise UpstreamError(f"the target database is not empty ({what}) and differs from "
                            "the source; import only into an empty database")
    result.nothing_to_do = True
    result.verification = [(name, theirs[name].rows, ours[name].rows, True) for name in theirs]


def _verify(source, result, batch_size):
    theirs = content.source_fingerprints(source, batch_size, known=result.streamed)
    ours = content.target_fingerprints(connection, batch_size)
    result.verification = [(name, theirs[name].rows, ours[name].rows, theirs[name] == ours[name])
                           for name in content.VIEWS]
    for name, *_, equal in result.verification:
        if not equal:
            result.differences += [f"{name}: {line}" for line in
                                   content.first_differences(source, connection, name)]
    for check in (check_capacity, check_allocations_have_inventory):
        found = check()
        if found.code:
            result.problems.note(found.details)
            result.problems.notes += [f"  {example}" for example in found.examples]


# --- writing ------------------------------------------------------------------------------

class _Writer:
    """Bulk inserts into our tables: COPY on PostgreSQL, executemany elsewhere."""

    def __init__(self):
        # COPY is PostgreSQL's; elsewhere executemany, which PyMySQL sends as one
        # multi-row INSERT per batch (MySQL) and SQLite runs in its own loop.
        self.postgresql = connection.vendor == "postgresql"
        self.written = {}

    def stamp(self, value):
        if value is None:
            return None
        aware = value.replace(tzinfo=dt_timezone.utc)
        return aware if self.postgresql else connection.ops.adapt_datetimefield_value(aware)

    def insert(self, table, columns, rows):
        if not rows:
            return
        with connection.cursor() as cursor:
            if self.postgresql:
                buffer = io.StringIO()
                for row in rows:
                    buffer.write("\t".join(_copy_text(v) for v in row))
                    buffer.write("\n")
                buffer.seek(0)
                from foundation.postgresql.base import without_round_trip_limit
                with without_round_trip_limit():
                    cursor.copy_expert(f"COPY {table} ({', '.join(columns)}) FROM STDIN",
                                       buffer)
            else:
                marks = ", ".join(["%s"] * len(columns))
                cursor.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
        self.written[table] = self.written.get(table, 0) + len(rows)


def _copy_text(value):
    if value is None:
        return r"\N"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    text = str(value)
    return (text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r"))


def _write_everything(source, result, skip_invalid, batch_size, progress):
    run = _Run(source, result, batch_size, progress)
    run.copy("resource_providers", PROVIDERS, [
        "id", "uuid", "name", "generation", "created_at", "updated_at", "parent_id",
        "root_id", "lft", "rght", "tree_id", "level"], run.provider)
    run.copy("placement_aggregates", AGGREGATES, ["id", "uuid", "created_at"], run.aggregate)
    run.copy("resource_provider_traits", PROVIDER_TRAITS,
             ["provider_id", "trait_id", "created_at"], run.provider_trait)
    run.copy("resource_provider_aggregates", PROVIDER_AGGREGATES,
             ["provider_id", "aggregate_id"], run.provider_aggregate)
    run.copy("inventories", INVENTORIES, [
        "id", "provider_id", "resource_class_id", "total", "reserved", "min_unit", "max_unit",
        "step_size", "allocation_ratio", "created_at", "updated_at"], run.inventory)
    run.copy("projects", PROJECTS, ["id", "external_id"], tuple)
    run.copy("users", USERS, ["id", "external_id"], tuple)
    run.copy("consumer_types", CONSUMER_TYPES, ["id", "name", "created_at"], run.consumer_type)
    run.copy("consumers", CONSUMERS, [
        "id", "uuid", "project_id", "user_id", "consumer_type_id", "generation", "created_at",
        "updated_at"], run.consumer)
    run.copy("allocations", ALLOCATIONS, [
        "id", "provider_id", "resource_class_id", "consumer_id", "used", "created_at",
        "updated_at"], run.allocation)
    run.end_usage()
    result.streamed = {name: view.result() for name, view in run.views.items()}
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), TARGET_TABLES):
            cursor.execute(sql)
    result.written = run.writer.written


class _Run:
    """One import's state; a method per source table turns a source row into our row,
    or into None after reporting why the row is left out."""

    def __init__(self, source, result, batch_size, progress):
        self.source, self.batch_size, self.progress = source, batch_size, progress
        self.problems = result.problems
        self.writer = _Writer()
        self.counts = {t: source.all(f"SELECT COUNT(*) FROM {t}")[0][0] for t in schema.TABLES}
        self.class_ids = _map_names(source, self.writer, "resource_classes", ResourceClass)
        self.trait_ids = _map_names(source, self.writer, "traits", Trait)
        self.class_names = dict(source.all("SELECT id, name FROM resource_classes"))
        skeleton = [row for batch in source.stream(SKELETON, batch_size=batch_size)
                    for row in batch]
        self.nodes = build_forest(skeleton, self.problems,
                                  lambda pk: _provider_uuid(source, pk))
        self.views = {name: content.Accumulator(name) for name in STREAMED_VIEWS}
        self.usage_key, self.usage = None, 0

    def copy(self, table, sql, columns, convert):
        with tqdm(total=self.counts[table], desc=f"{table:28}", unit=" rows",
                  file=self.progress, disable=self.progress is None, mininterval=0.5) as bar:
            for batch in self.source.stream(sql, batch_size=self.batch_size):
                rows = [row for row in map(convert, batch) if row is not None]
                self.writer.insert(table, columns, rows)
                bar.update(len(batch))

    def created(self, created, updated):
        return self.writer.stamp(content.created_stamp(created, updated))

    def updated(self, updated):
        return self.writer.stamp(to_utc(updated))

    def provider(self, row):
        pk, uuid, name, generation, created, updated, parent = row
        node = self.nodes.get(pk)
        if node is None:  # reported by build_forest
            return None
        if name is None:
            self.problems.refuse(f"provider {uuid} has no name")
            return None
        return (pk, uuid, name, generation or 0, self.created(created, updated),
                self.updated(updated), parent, node.root, node.lft, node.rght, node.tree_id,
                node.level)

    def aggregate(self, row):
        pk, uuid, created, updated = row
        if uuid is None:  # the column is nullable in Placement's schema
            self.problems.skip(f"aggregate id {pk} has no uuid")
            return None
        return (pk, uuid, self.created(created, updated))

    def provider_trait(self, row):
        rp, trait, created, updated = row
        if rp not in self.nodes or trait not in self.trait_ids:
            self.problems.skip(f"trait id {trait} of provider id {rp}: "
                               f"{'provider' if rp not in self.nodes else 'trait'} row is gone")
            return None
        return (rp, self.trait_ids[trait], self.created(created, updated))

    def provider_aggregate(self, row):
        rp, aggregate, found = row
        if rp not in self.nodes or found is None:
            self.problems.skip(f"aggregate id {aggregate} of provider id {rp}: "
                               f"{'provider' if rp not in self.nodes else 'aggregate'} "
                               "row is gone")
            return None
        return (rp, aggregate)

    def inventory(self, row):
        pk, rp, rc, total, reserved, min_unit, max_unit, step_size, ratio, created, updated = row
        if rp not in self.nodes or rc not in self.class_ids:
            self.problems.skip(f"inventory id {pk} (provider id {rp}, class id {rc}): "
                               f"{'provider' if rp not in self.nodes else 'class'} row is gone")
            return None
        return (pk, rp, self.class_ids[rc], total, reserved, min_unit, max_unit, step_size,
                float(ratio), self.created(created, updated), self.updated(updated))

    def consumer_type(self, row):
        pk, name, created, updated = row
        return (pk, name, self.created(created, updated))

    def consumer(self, row):
        (pk, uuid, project, user, ctype, generation, created, updated, ok,
         project_name, user_name, type_name) = row
        if not ok:
            self.problems.skip(f"consumer {uuid}: its project, user or consumer type "
                               "row is gone")
            return None
        self.views["consumers"].add((uuid, project_name, user_name, type_name, generation,
                                     created, updated))
        return (pk, uuid, project, user, ctype, generation or 0, self.created(created, updated),
                self.updated(updated))

    def allocation(self, row):
        pk, rp, rc, consumer_uuid, used, created, updated, consumer, ok, rp_uuid = row
        gone = [what for what, missing in (
            ("provider", rp not in self.nodes), ("class", rc not in self.class_ids),
            ("consumer", consumer is None or not ok)) if missing]
        if gone:
            self.problems.skip(f"allocation id {pk} (consumer {consumer_uuid}, provider id "
                               f"{rp}, class id {rc}, used {used}): "
                               f"{' and '.join(gone)} row is gone")
            return None
        self.views["allocations"].add((rp_uuid, self.class_names[rc], consumer_uuid, used,
                                       created, updated))
        if (rp_uuid, rc) != self.usage_key:  # rows come in (provider, class) order
            self.end_usage()
            self.usage_key, self.usage = (rp_uuid, rc), 0
        self.usage += used
        return (pk, rp, self.class_ids[rc], consumer, used, self.created(created, updated),
                self.updated(updated))

    def end_usage(self):
        if self.usage_key is not None:
            rp_uuid, rc = self.usage_key
            self.views["usage per provider and class"].add(
                (rp_uuid, self.class_names[rc], self.usage))
            self.usage_key = None


def _map_names(source, writer, table, model):
    """{source id: our id} for resource classes or traits, matched by name.

    Names we lack (custom ones, or standard ones of a newer library) are added
    with their source timestamps; existing ones are used as they are."""
    rows = source.all(f"SELECT id, name, created_at, updated_at FROM {table}")
    ours = dict(model.objects.values_list("name", "id"))
    writer.insert(table, ["name", "created_at", "updated_at"], [
        (name, writer.stamp(content.created_stamp(created, updated)),
         writer.stamp(to_utc(updated)))
        for _, name, created, updated in rows if name not in ours])
    ours = dict(model.objects.values_list("name", "id"))
    return {pk: ours[name] for pk, name, _, _ in rows}


def _provider_uuid(source, pk):
    rows = source.all("SELECT uuid FROM resource_providers WHERE id = %s", (pk,))
    return rows[0][0] if rows else f"<id {pk}>"
