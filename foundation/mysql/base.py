"""Django's MySQL backend on PyMySQL, every table InnoDB, utf8mb4, binary collation.

The driver: PyMySQL, pure Python, the one oslo.db's URLs (mysql+pymysql://) and every
OpenStack deployment tool name, so an operator's `connection` line works unchanged and
nothing needs a compiler or the client library's headers. Django speaks to it through
PyMySQL's MySQLdb compatibility (install_as_MySQLdb), as to mysqlclient.

Tables: ENGINE=InnoDB (row locks, transactions; Galera replicates only InnoDB),
utf8mb4 (4-byte characters) and utf8mb4_bin, whatever the database's defaults: a
deployment tool's `CREATE DATABASE placement` gets the server's defaults (often utf8 and
a case-insensitive collation), under which "rp-A" and "rp-a" would be one name where
PostgreSQL and SQLite see two, and the API would answer differently per database.
"""
import pymysql

pymysql.install_as_MySQLdb()

from django.db.backends.mysql import base, schema  # noqa: E402  (after the MySQLdb shim)

TABLE_OPTIONS = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"


class DatabaseSchemaEditor(schema.DatabaseSchemaEditor):
    sql_create_table = schema.DatabaseSchemaEditor.sql_create_table + TABLE_OPTIONS


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor
