"""export_placement_db, the way back: import -> export -> import is lossless, into
Placement's schema on SQLite, MariaDB and PostgreSQL."""
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from allocations.upstream import content, schema
from allocations.upstream.dbapi import Database
from providers.models import ResourceProvider
from tests.upstream.conftest import source_rows

pytestmark = pytest.mark.django_db


def source_fingerprints(url):
    database = Database(url)
    try:
        return content.source_fingerprints(database)
    finally:
        database.close()


def wipe_our_data():
    with connection.cursor() as cursor:
        for table in ("allocations", "consumers", "consumer_types", "projects", "users",
                      "inventories", "resource_provider_traits",
                      "resource_provider_aggregates", "placement_aggregates",
                      "resource_providers"):
            cursor.execute(f"DELETE FROM {table}")
        for table in ("resource_classes", "traits"):
            cursor.execute(f"DELETE FROM {table} WHERE name LIKE 'CUSTOM%%'")


def round_trip(source_url, export_url, *batch_args):
    call_command("import_placement_db", source_url, *batch_args, stdout=StringIO())
    first = content.target_fingerprints(connection)
    call_command("export_placement_db", export_url, *batch_args, stdout=StringIO())
    assert source_fingerprints(export_url) == source_fingerprints(source_url)
    wipe_our_data()
    assert not ResourceProvider.objects.exists()
    call_command("import_placement_db", export_url, *batch_args, stdout=StringIO())
    assert content.target_fingerprints(connection) == first


# batches of 7 rows: every large table is read and written across batch boundaries
@pytest.mark.parametrize("batch_args", [(), ("--batch-size", "7")],
                         ids=["default-batch", "batch-of-7"])
def test_round_trip_through_sqlite(sqlite_sample, tmp_path, batch_args):
    exported = f"sqlite:///{tmp_path / 'back.sqlite'}"
    round_trip(sqlite_sample, exported, *batch_args)
    # Placement's own layout: revision row, standard classes at their os-resource-classes
    # positions, custom ones from 10000, consumer uuids in allocations
    assert source_rows(exported, "SELECT version_num FROM alembic_version") == [
        (schema.REVISION,)]
    assert source_rows(exported, "SELECT id FROM resource_classes WHERE name = 'VCPU'") == [
        (0,)]
    assert min(r[0] for r in source_rows(
        exported, "SELECT id FROM resource_classes WHERE name LIKE 'CUSTOM%'")) == 10000
    ddl = " ".join(r[0] for r in source_rows(
        exported, "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
    assert "CREATE INDEX allocations_consumer_id_idx" in ddl
    assert "CONSTRAINT uniq_consumers0uuid UNIQUE (uuid)" in ddl


def test_round_trip_through_mariadb(mariadb_sample, new_mariadb):
    # the MariaDB sample keeps whole seconds, as Placement's DATETIME columns do
    round_trip(mariadb_sample, new_mariadb()[0])


def test_round_trip_through_postgresql(sqlite_sample, postgres_empty):
    round_trip(sqlite_sample, postgres_empty)


def test_round_trip_of_a_generated_source(tmp_path):
    generated = f"sqlite:///{tmp_path / 'gen.sqlite'}"
    call_command("generate_placement_db", generated, "--providers", "25", "--consumers", "40",
                 stdout=StringIO())
    assert source_rows(generated, "SELECT COUNT(*) FROM allocations") == [(120,)]
    round_trip(generated, f"sqlite:///{tmp_path / 'back.sqlite'}")


def test_export_refuses_a_database_with_placement_tables(sqlite_sample):
    call_command("import_placement_db", sqlite_sample, stdout=StringIO())
    with pytest.raises(CommandError) as info:
        call_command("export_placement_db", sqlite_sample, stdout=StringIO())
    assert "already has Placement table(s)" in str(info.value)
    with pytest.raises(CommandError) as info:
        call_command("export_placement_db", "ftp://x/y", stdout=StringIO())
    assert "unknown URL scheme 'ftp'" in str(info.value)
