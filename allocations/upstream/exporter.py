"""export_placement_db: our data -> an empty database of Placement 16.0.0's schema.

The way back: Placement itself can serve the result. The tables, indexes and
the alembic_version row are created as Placement's migrations create them;
standard resource classes get Placement's ids (their position in
os-resource-classes), custom ones ids from 10000 up. Everything else keeps our
ids. Rows are streamed in batches; on SQLite and PostgreSQL the export is one
transaction, on MariaDB/MySQL (whose DDL commits) the tables are dropped again
if writing fails.
"""
import os_resource_classes
from django.db import connection

from allocations.upstream import UpstreamError, schema
from allocations.upstream.content import django_stream
from allocations.upstream.dbapi import Database, to_utc

BATCH_SIZE = 5000
STANDARD_CLASS_IDS = {name: index for index, name in enumerate(os_resource_classes.STANDARDS)}

# (Placement table, its columns, query on ours giving those columns in order,
#  indexes of the class / trait id columns to map)
COPIES = [
    ("placement_aggregates", ["id", "uuid", "created_at", "updated_at"],
     "SELECT id, uuid, created_at, NULL FROM placement_aggregates ORDER BY id", ()),
    ("projects", ["id", "external_id"], "SELECT id, external_id FROM projects ORDER BY id", ()),
    ("users", ["id", "external_id"], "SELECT id, external_id FROM users ORDER BY id", ()),
    ("consumer_types", ["id", "name", "created_at", "updated_at"],
     "SELECT id, name, created_at, NULL FROM consumer_types ORDER BY id", ()),
    ("resource_providers", ["id", "uuid", "name", "generation", "root_provider_id",
                            "parent_provider_id", "created_at", "updated_at"],
     # parents before children: MariaDB checks the self-references row by row
     "SELECT id, uuid, name, generation, root_id, parent_id, created_at, updated_at "
     "FROM resource_providers ORDER BY level, id", ()),
    ("resource_provider_aggregates", ["resource_provider_id", "aggregate_id", "created_at",
                                      "updated_at"],
     "SELECT provider_id, aggregate_id, NULL, NULL FROM resource_provider_aggregates", ()),
    ("resource_provider_traits", ["resource_provider_id", "trait_id", "created_at",
                                  "updated_at"],
     "SELECT provider_id, trait_id, created_at, NULL FROM resource_provider_traits", (),
     ),
    ("inventories", ["id", "resource_provider_id", "resource_class_id", "total", "reserved",
                     "min_unit", "max_unit", "step_size", "allocation_ratio", "created_at",
                     "updated_at"],
     "SELECT id, provider_id, resource_class_id, total, reserved, min_unit, max_unit, "
     "step_size, allocation_ratio, created_at, updated_at FROM inventories ORDER BY id", (2,)),
    ("consumers", ["id", "uuid", "project_id", "user_id", "generation", "consumer_type_id",
                   "created_at", "updated_at"],
     "SELECT id, uuid, project_id, user_id, generation, consumer_type_id, created_at, "
     "updated_at FROM consumers ORDER BY id", ()),
    ("allocations", ["id", "resource_provider_id", "consumer_id", "resource_class_id", "used",
                     "created_at", "updated_at"],
     "SELECT a.id, a.provider_id, c.uuid, a.resource_class_id, a.used, a.created_at, "
     "a.updated_at FROM allocations a JOIN consumers c ON c.id = a.consumer_id "
     "ORDER BY a.id", (3,)),
]
TIMESTAMP_COLUMNS = ("created_at", "updated_at")


def placement_class_ids(rows):
    """{our class id: Placement's id}: standard names by os-resource-classes position,
    others (custom, or standard names of another library version) from 10000 up."""
    mapping, next_custom = {}, schema.FIRST_CUSTOM_CLASS_ID
    for pk, name in sorted(rows):
        if name in STANDARD_CLASS_IDS:
            mapping[pk] = STANDARD_CLASS_IDS[name]
        else:
            mapping[pk] = next_custom
            next_custom += 1
    return mapping


def create_schema(target):
    """Placement's tables, indexes and alembic_version row, in an empty database."""
    present = [t for t in target.table_columns() if t in schema.TABLES]
    if present:
        raise UpstreamError(f"the target database already has Placement table(s) "
                            f"{', '.join(sorted(present))}; export only into an empty one")
    for statement in schema.create_statements(target.dialect):
        target.execute(statement)
    target.execute("INSERT INTO alembic_version (version_num) VALUES (%s)", (schema.REVISION,))


def export_database(url, *, batch_size=BATCH_SIZE, progress=None):
    """Write our data into the empty database at `url`. Returns {table: rows written}."""
    target = Database(url, must_exist=False)
    written = {}
    try:
        target.begin_write()
        try:
            create_schema(target)
            _write(target, written, batch_size)
            # PostgreSQL's sequences do not follow ids inserted explicitly; MySQL's
            # AUTO_INCREMENT (InnoDB) and SQLite's rowid do, by themselves.
            if target.dialect == "postgresql":
                for table, (cols, *_rest) in schema.TABLES.items():
                    if ("id", "serial", False) in cols:
                        target.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                                       f"COALESCE(MAX(id), 1)) FROM {table}")
            target.commit()
        except BaseException:
            target.end()
            # MySQL commits each CREATE TABLE by itself: the rollback left the tables
            # behind (PostgreSQL and SQLite roll the DDL back with the rest).
            if target.dialect == "mysql":
                for table in reversed(list(schema.TABLES)):
                    try:
                        target.execute(f"DROP TABLE IF EXISTS {table}")
                    except UpstreamError:
                        pass
            raise
    finally:
        target.close()
    return written


def _write(target, written, batch_size):
    classes = list(_all("SELECT id, name FROM resource_classes"))
    class_ids = placement_class_ids(classes)
    for table, query, id_map in (
            ("resource_classes", "SELECT id, name, created_at, updated_at FROM resource_classes "
                                 "ORDER BY id", class_ids),
            ("traits", "SELECT id, name, created_at, updated_at FROM traits ORDER BY id", None)):
        rows = [(id_map[pk] if id_map else pk, name, _stamp(target, c), _stamp(target, u))
                for pk, name, c, u in _all(query)]
        _insert(target, table, ["id", "name", "created_at", "updated_at"], rows, written)
    for table, columns, query, class_columns in COPIES:
        stamps = [i for i, c in enumerate(columns) if c in TIMESTAMP_COLUMNS]
        for batch in django_stream(connection, query, batch_size):
            rows = []
            for row in batch:
                row = list(row)
                for i in stamps:
                    row[i] = _stamp(target, row[i])
                for i in class_columns:
                    row[i] = class_ids[row[i]]
                rows.append(tuple(row))
            _insert(target, table, columns, rows, written)


def _all(query):
    with connection.cursor() as cursor:
        cursor.execute(query)
        return cursor.fetchall()


def _insert(target, table, columns, rows, written):
    if not rows:
        return
    marks = ", ".join(["%s"] * len(columns))
    target.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
    written[table] = written.get(table, 0) + len(rows)


def _stamp(target, value):
    value = to_utc(value)
    if value is None or target.dialect != "sqlite":
        return value
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")  # SQLAlchemy's SQLite DATETIME format
