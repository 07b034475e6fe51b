"""The topology token: a value every write to the provider topology replaces, in the
writing transaction, so that a process can tell whether its snapshot of the topology
(candidates/sql/topology.py) is still current with one read.

The topology is what allocation candidates read besides inventories and usage: resource
classes, traits, aggregates, the providers' uuids and tree columns, and the provider
trait and aggregate links. Triggers replace the token on every insert, delete and
change of those (a provider's name or generation is not topology: its generation moves
with every claim), and on TRUNCATE (PostgreSQL).

PostgreSQL: deferred constraint triggers, so the one token row is written at commit and
concurrent writers of different providers wait for each other only while committing
(an immediate trigger would hold the row from the first change to the commit, and
could deadlock with provider row locks taken in another order). The transaction-local
setting placement.topology_changed makes it one write per transaction. SQLite
serialises writers anyway: plain triggers. MySQL/MariaDB have neither deferred nor
statement triggers: a row trigger per event writes the token at once, so the token row
is held from a transaction's first topology change to its commit; topology writers take
turns there (and on Galera conflict there, the loser retried whole by
foundation.db_retry), which is what the tree writes need anyway
(providers/services/tree_lock.py); claims, which change no topology, never touch it.
MySQL has no TRUNCATE trigger: nothing here truncates these tables. Tokens are random: a rolled-back change
never brings back a token some snapshot holds.
"""
from django.db import migrations

# table -> columns whose change is a change of the topology (None: any update)
TOPOLOGY_TABLES = {
    "resource_classes": None,
    "traits": None,
    "placement_aggregates": None,
    "resource_providers": ("uuid", "parent_id", "root_id", "tree_id", "lft", "rght"),
    "resource_provider_traits": None,
    "resource_provider_aggregates": None,
}

PG_NEW_TOKEN = """INSERT INTO topology_token (id, token)
        VALUES (1, md5(random()::text || clock_timestamp()::text))
        ON CONFLICT (id) DO UPDATE SET token = EXCLUDED.token"""

PG_FUNCTION = f"""
CREATE FUNCTION placement_topology_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('placement.topology_changed', true) IS DISTINCT FROM 'yes' THEN
        {PG_NEW_TOKEN};
        PERFORM set_config('placement.topology_changed', 'yes', true);
    END IF;
    RETURN NULL;
END $$"""

SQLITE_NEW_TOKEN = ("INSERT OR REPLACE INTO topology_token (id, token)"
                    " VALUES (1, lower(hex(randomblob(16))))")


def _changed(columns, distinct="IS DISTINCT FROM"):
    return " OR ".join(f"OLD.{c} {distinct} NEW.{c}" for c in columns)


def _postgresql(table, columns):
    name = f"{table}_topology"
    execute = "FOR EACH ROW EXECUTE PROCEDURE placement_topology_changed()"
    deferred = "DEFERRABLE INITIALLY DEFERRED"
    statements = [
        f"CREATE TRIGGER {name}_truncate AFTER TRUNCATE ON {table}"
        " FOR EACH STATEMENT EXECUTE PROCEDURE placement_topology_changed()",
    ]
    if columns is None:
        statements.append(f"CREATE CONSTRAINT TRIGGER {name} AFTER INSERT OR DELETE OR UPDATE"
                          f" ON {table} {deferred} {execute}")
    else:
        statements += [
            f"CREATE CONSTRAINT TRIGGER {name} AFTER INSERT OR DELETE ON {table}"
            f" {deferred} {execute}",
            f"CREATE CONSTRAINT TRIGGER {name}_update AFTER UPDATE ON {table} {deferred}"
            f" FOR EACH ROW WHEN ({_changed(columns)})"
            " EXECUTE PROCEDURE placement_topology_changed()",
        ]
    return statements


def _sqlite(table, columns):
    name = f"{table}_topology"
    statements = [
        f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} BEGIN {SQLITE_NEW_TOKEN}; END",
        f"CREATE TRIGGER {name}_delete AFTER DELETE ON {table} BEGIN {SQLITE_NEW_TOKEN}; END",
    ]
    when = f" WHEN {_changed(columns, distinct='IS NOT')}" if columns else ""
    statements.append(f"CREATE TRIGGER {name}_update AFTER UPDATE ON {table}{when}"
                      f" BEGIN {SQLITE_NEW_TOKEN}; END")
    return statements


MYSQL_NEW_TOKEN = ("INSERT INTO topology_token (id, token) VALUES (1, UUID())"
                   " ON DUPLICATE KEY UPDATE token = UUID()")


def _mysql(table, columns):
    name = f"{table}_topology"
    statements = [
        f"CREATE TRIGGER {name}_insert AFTER INSERT ON {table} FOR EACH ROW {MYSQL_NEW_TOKEN}",
        f"CREATE TRIGGER {name}_delete AFTER DELETE ON {table} FOR EACH ROW {MYSQL_NEW_TOKEN}",
    ]
    if columns:
        unchanged = " AND ".join(f"OLD.{c} <=> NEW.{c}" for c in columns)
        body = f"IF NOT ({unchanged}) THEN {MYSQL_NEW_TOKEN}; END IF"
    else:
        body = MYSQL_NEW_TOKEN
    statements.append(f"CREATE TRIGGER {name}_update AFTER UPDATE ON {table} FOR EACH ROW"
                      f" BEGIN {body}; END")
    return statements


def create(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    table = "CREATE TABLE topology_token (id integer PRIMARY KEY, token varchar(36) NOT NULL)"
    if vendor == "postgresql":
        statements = [table, PG_FUNCTION, PG_NEW_TOKEN]
        for name, columns in TOPOLOGY_TABLES.items():
            statements += _postgresql(name, columns)
    elif vendor in ("sqlite", "mysql"):
        make = _sqlite if vendor == "sqlite" else _mysql
        statements = [table, SQLITE_NEW_TOKEN if vendor == "sqlite" else MYSQL_NEW_TOKEN]
        for name, columns in TOPOLOGY_TABLES.items():
            statements += make(name, columns)
    else:
        raise RuntimeError(f"unsupported database: {vendor}")
    for statement in statements:
        schema_editor.execute(statement)


def drop(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("DROP TABLE topology_token")
        schema_editor.execute("DROP FUNCTION placement_topology_changed() CASCADE")
        return
    for name in TOPOLOGY_TABLES:   # SQLite and MySQL: the same three triggers per table
        for event in ("insert", "delete", "update"):
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}_topology_{event}")
    schema_editor.execute("DROP TABLE topology_token")


class Migration(migrations.Migration):

    dependencies = [
        ("providers", "0005_drop_duplicate_root_index"),
    ]

    operations = [
        # not atomic by itself: MySQL runs DDL (CREATE TRIGGER) outside transactions
        migrations.RunPython(create, drop, atomic=False),
    ]
