"""Inventories join the topology (migration 0006): every insert, delete and change of an
inventory row, and a TRUNCATE, replaces the token, so that a process's snapshot of the
topology can hold the inventories too and a candidates request reads only their usage
(candidates/sql/topology.py). Inventories change when a compute service or an operator
edits them, rarely next to the claims, which change only the usage."""
from importlib import import_module

from django.db import migrations

topology_token = import_module("providers.migrations.0006_topology_token")

TABLES = {"inventories": None}   # table -> columns (None: any update), as in 0006


def create(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    make = {"postgresql": topology_token._postgresql, "sqlite": topology_token._sqlite,
            "mysql": topology_token._mysql}
    if vendor not in make:
        raise RuntimeError(f"unsupported database: {vendor}")
    for table, columns in TABLES.items():
        for statement in make[vendor](table, columns):
            schema_editor.execute(statement)


def drop(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table in TABLES:
        if vendor == "postgresql":
            for suffix in ("", "_truncate"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_topology{suffix}"
                                      f" ON {table}")
        else:   # SQLite and MySQL
            for event in ("insert", "delete", "update"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_topology_{event}")


class Migration(migrations.Migration):

    dependencies = [
        ("providers", "0006_topology_token"),
    ]

    operations = [
        # not atomic by itself: MySQL runs DDL (CREATE TRIGGER) outside transactions
        migrations.RunPython(create, drop, atomic=False),
    ]
