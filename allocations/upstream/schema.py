"""Placement 16.0.0's database schema (alembic head a082b8bb98d0).

Only what the import reads and the export writes: table and column names,
and the DDL that Placement's own migrations produce, for each dialect.
"""
REVISION = "a082b8bb98d0"
RELEASE = "Placement 16.0.0"

# Custom resource classes get ids from here up (standard ones: os-resource-classes order).
FIRST_CUSTOM_CLASS_ID = 10000

TS = [("created_at", "datetime", True), ("updated_at", "datetime", True)]



def _lookup_table(table, column, kind, nullable=False):
    """A table of timestamps, an id and one unique column, its constraint named
    uniq_<table>0<column> as Placement's migrations name it."""
    return (TS + [("id", "serial", False), (column, kind, nullable)], ("id",),
            [(f"uniq_{table}0{column}", (column,))], [], [])


# name -> (columns [(name, type, nullable)], primary key, unique constraints,
#          indexes, foreign keys [(name or None, column, table)])
TABLES = {
    "alembic_version": (
        [("version_num", "str32", False)], ("version_num",), [], [], []),
    "consumer_types": _lookup_table("consumer_types", "name", "str255"),
    "placement_aggregates": _lookup_table("placement_aggregates", "uuid", "str36", True),
    "projects": _lookup_table("projects", "external_id", "str255"),
    "users": _lookup_table("users", "external_id", "str255"),
    "resource_classes": _lookup_table("resource_classes", "name", "str255"),
    "traits": _lookup_table("traits", "name", "str255"),
    "resource_providers": (
        TS + [("id", "serial", False), ("uuid", "str36", False), ("name", "str200", True),
              ("generation", "int", True), ("root_provider_id", "int", True),
              ("parent_provider_id", "int", True)], ("id",),
        [("uniq_resource_providers0name", ("name",)),
         ("uniq_resource_providers0uuid", ("uuid",))],
        [("resource_providers_parent_provider_id_idx", ("parent_provider_id",)),
         ("resource_providers_root_provider_id_idx", ("root_provider_id",))],
        [("resource_providers_ibfk_1", "parent_provider_id", "resource_providers"),
         ("resource_providers_ibfk_2", "root_provider_id", "resource_providers")]),
    "inventories": (
        TS + [("id", "serial", False), ("resource_provider_id", "int", False),
              ("resource_class_id", "int", False), ("total", "int", False),
              ("reserved", "int", False), ("min_unit", "int", False),
              ("max_unit", "int", False), ("step_size", "int", False),
              ("allocation_ratio", "float", False)], ("id",),
        [("uniq_inventories0resource_provider_resource_class",
          ("resource_provider_id", "resource_class_id"))],
        [("inventories_resource_class_id_idx", ("resource_class_id",))], []),
    "allocations": (
        TS + [("id", "serial", False), ("resource_provider_id", "int", False),
              ("consumer_id", "str36", False), ("resource_class_id", "int", False),
              ("used", "int", False)], ("id",), [],
        [("allocations_resource_provider_class_used_idx",
          ("resource_provider_id", "resource_class_id", "used")),
         ("allocations_resource_class_id_idx", ("resource_class_id",)),
         ("allocations_consumer_id_idx", ("consumer_id",))], []),
    "consumers": (
        TS + [("id", "serial", False), ("uuid", "str36", False), ("project_id", "int", False),
              ("user_id", "int", False), ("generation", "gen", False),
              ("consumer_type_id", "int", True)], ("id",),
        [("uniq_consumers0uuid", ("uuid",))],
        [("consumers_project_id_uuid_idx", ("project_id", "uuid")),
         ("consumers_project_id_user_id_uuid_idx", ("project_id", "user_id", "uuid")),
         ("consumers_consumer_type_id_idx", ("consumer_type_id",))],
        [("consumers_consumer_type_id_fkey", "consumer_type_id", "consumer_types")]),
    "resource_provider_aggregates": (
        TS + [("resource_provider_id", "int", False), ("aggregate_id", "int", False)],
        ("resource_provider_id", "aggregate_id"), [],
        [("resource_provider_aggregates_aggregate_id_idx", ("aggregate_id",))], []),
    "resource_provider_traits": (
        TS + [("trait_id", "int", False), ("resource_provider_id", "int", False)],
        ("trait_id", "resource_provider_id"), [],
        [("resource_provider_traits_resource_provider_trait_idx",
          ("resource_provider_id", "trait_id"))],
        [(None, "resource_provider_id", "resource_providers"),
         (None, "trait_id", "traits")]),
}


def columns(table):
    return [name for name, _, _ in TABLES[table][0]]


_TYPES = {
    "sqlite": {"serial": "INTEGER", "int": "INTEGER", "gen": "INTEGER DEFAULT 0",
               "float": "FLOAT", "datetime": "DATETIME"},
    "mysql": {"serial": "INT(11) AUTO_INCREMENT", "int": "INT(11)", "gen": "INT(11) DEFAULT 0",
              "float": "FLOAT", "datetime": "DATETIME"},
    "postgresql": {"serial": "SERIAL", "int": "INTEGER", "gen": "INTEGER DEFAULT 0",
                   "float": "FLOAT", "datetime": "TIMESTAMP WITHOUT TIME ZONE"},
}


def _type(dialect, key):
    if key.startswith("str"):
        return f"VARCHAR({key[3:]})"
    return _TYPES[dialect][key]


def create_statements(dialect):
    """CREATE TABLE / CREATE INDEX statements of the whole schema for `dialect`."""
    statements = []
    for table, (cols, pk, uniques, indexes, fks) in TABLES.items():
        parts = [f"{name} {_type(dialect, kind)}{'' if nullable else ' NOT NULL'}"
                 for name, kind, nullable in cols]
        pk_name = "alembic_version_pkc" if table == "alembic_version" else None
        parts.append((f"CONSTRAINT {pk_name} " if pk_name else "")
                     + f"PRIMARY KEY ({', '.join(pk)})")
        parts += [f"CONSTRAINT {name} UNIQUE ({', '.join(cols_)})" for name, cols_ in uniques]
        parts += [(f"CONSTRAINT {name} " if name else "")
                  + f"FOREIGN KEY ({column}) REFERENCES {target} (id)"
                  for name, column, target in fks]
        suffix = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4" if dialect == "mysql" else ""
        statements.append(f"CREATE TABLE {table} (\n  " + ",\n  ".join(parts) + f"\n){suffix}")
        statements += [f"CREATE INDEX {name} ON {table} ({', '.join(cols_)})"
                       for name, cols_ in indexes]
    return statements
