"""export_placement_db, the way back: import -> export -> import is lossless, into
Placement's schema on SQLite, MariaDB and PostgreSQL."""
from datetime import datetime, timezone
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from allocations.upstream import content, schema
from allocations.upstream.dbapi import Database
from bench.__main__ import run as run_bench
from providers.models import Aggregate, ProviderAggregate, ResourceProvider
from tests.upstream.conftest import source_rows, sqlite_edit

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
            if table == "resource_providers":
                # MySQL checks the parent key row by row: children go first
                cursor.execute("UPDATE resource_providers SET parent_id = NULL")
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


LONELY = "0d2b8f4e-5c3a-4e61-9a57-6f0c1d2e3b4a"  # an aggregate that never had members


def test_aggregates_without_members_import_and_round_trip(sqlite_sample, tmp_path, api):
    emptied = source_rows(sqlite_sample, "SELECT uuid, created_at FROM placement_aggregates "
                                         "WHERE id = 3")[0]
    sqlite_edit(sqlite_sample,
                # one whose last member left, one that never had any
                "DELETE FROM resource_provider_aggregates WHERE aggregate_id = 3",
                "INSERT INTO placement_aggregates (id, uuid, created_at) "
                f"VALUES (40, '{LONELY}', '2026-11-20 08:00:00.123456')")
    exported = f"sqlite:///{tmp_path / 'back.sqlite'}"
    round_trip(sqlite_sample, exported)  # imported, verified, exported, imported again
    ours = {a.uuid: a.created_at for a in Aggregate.objects.filter(
        uuid__in=[emptied[0], LONELY])}
    assert ours == {
        emptied[0]: datetime.fromisoformat(emptied[1]).replace(tzinfo=timezone.utc),
        LONELY: datetime(2026, 11, 20, 8, 0, 0, 123456, tzinfo=timezone.utc)}
    assert not ProviderAggregate.objects.filter(aggregate__uuid__in=ours).exists()
    assert sorted(source_rows(exported, "SELECT uuid FROM placement_aggregates a WHERE NOT "
                                        "EXISTS (SELECT 1 FROM resource_provider_aggregates x "
                                        "WHERE x.aggregate_id = a.id)")) == sorted(
        [(emptied[0],), (LONELY,)])
    for uuid in ours:
        listed = api.get(f"/resource_providers?member_of={uuid}")
        assert listed.status_code == 200 and listed.json()["resource_providers"] == []


def test_round_trip_through_mariadb(mariadb_sample, new_mariadb):
    # the MariaDB sample keeps whole seconds, as Placement's DATETIME columns do
    round_trip(mariadb_sample, new_mariadb()[0])


def test_round_trip_through_postgresql(sqlite_sample, postgres_empty):
    round_trip(sqlite_sample, postgres_empty)


def test_round_trip_of_a_generated_source(tmp_path):
    generated = f"sqlite:///{tmp_path / 'gen.sqlite'}"
    run_bench(["placement_db", generated, "--providers", "25", "--consumers", "40"],
              StringIO())
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
