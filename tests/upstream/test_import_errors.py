"""Bad inputs to import_placement_db: one clear line, a non-zero exit, nothing written."""
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from allocations.models import Allocation
from allocations.upstream.schema import REVISION
from providers.models import Inventory, ResourceClass, ResourceProvider, Trait
from tests.upstream.conftest import source_rows, sqlite_edit

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def refused(*args):
    """The CommandError message of a refused import (Django exits 1 with it)."""
    with pytest.raises(CommandError) as info:
        call_command("import_placement_db", *args, stdout=StringIO(), stderr=StringIO())
    message = str(info.value)
    assert "\n" not in message
    return message


def nothing_written():
    return (not ResourceProvider.objects.exists()
            and not ResourceClass.objects.filter(name__startswith="CUSTOM_").exists()
            and not Trait.objects.filter(name__startswith="CUSTOM_").exists())


def test_unknown_scheme_exits_non_zero_with_one_line():
    completed = subprocess.run(
        [sys.executable, "manage.py", "import_placement_db", "oracle://scott@db/placement"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode != 0
    assert completed.stderr.strip().splitlines() == [
        "CommandError: unknown URL scheme 'oracle' in 'oracle://scott@db/placement' "
        "(supported: mysql+pymysql://, postgresql://, sqlite:///)"]


@pytest.mark.parametrize("url, words", [
    ("mysql+pymysql://root:secret@127.0.0.1:1/placement", "cannot connect to"),
    ("postgresql://postgres@127.0.0.1:1/placement", "cannot connect to"),
    ("sqlite:////nonexistent/placement.sqlite", "no such file"),
])
def test_unreachable_source(url, words):
    message = refused(url)
    assert words in message and "secret" not in message
    assert nothing_written()


def test_wrong_schema_revision(sqlite_sample):
    sqlite_edit(sqlite_sample, "UPDATE alembic_version SET version_num = 'b5c396305c25'")
    message = refused(sqlite_sample)
    assert "b5c396305c25" in message and REVISION in message and "16.0.0" in message
    assert nothing_written()


@pytest.mark.parametrize("table", ["consumer_types", "alembic_version", "allocations"])
def test_source_table_missing(sqlite_sample, table):
    sqlite_edit(sqlite_sample, f"DROP TABLE {table}")
    assert f"source table '{table}' is missing" in refused(sqlite_sample)
    assert nothing_written()


def test_non_empty_target(sqlite_sample, mariadb_sample):
    call_command("import_placement_db", sqlite_sample, stdout=StringIO())
    before = ResourceProvider.objects.count()
    out = StringIO()
    call_command("import_placement_db", sqlite_sample, stdout=out)  # the very same data
    assert "nothing to do" in out.getvalue()
    # the MariaDB sample is another run of the same region: other timestamps and uuids
    assert "not empty" in refused(mariadb_sample)
    assert ResourceProvider.objects.count() == before


def test_dangling_rows_stop_the_import_unless_skipped(sqlite_sample):
    sqlite_edit(
        sqlite_sample,
        # an allocation whose consumer row is gone, one whose class is gone
        "DELETE FROM consumers WHERE id = (SELECT MIN(id) FROM consumers)",
        "UPDATE allocations SET resource_class_id = 9999 WHERE id = (SELECT MAX(id) FROM "
        "allocations)",
        # a child whose root disagrees with its parent chain
        "UPDATE resource_providers SET root_provider_id = 2 WHERE name = 'cn1-numa0-pf'",
    )
    out = StringIO()
    with pytest.raises(CommandError) as info:
        call_command("import_placement_db", sqlite_sample, "--dry-run", stdout=out)
    assert "invalid rows" in str(info.value)
    report = out.getvalue()
    assert "consumer row is gone" in report and "class row is gone" in report
    assert "parent chain ends at 2636d76a-3397-5ed1-8010-743067bbbf93" in report
    assert "invalid rows" in refused(sqlite_sample)
    assert nothing_written()

    out = StringIO()
    call_command("import_placement_db", sqlite_sample, "--skip-invalid", stdout=out)
    assert "skipped: allocation id" in out.getvalue() and "Imported" in out.getvalue()
    pf = ResourceProvider.objects.get(name="cn1-numa0-pf")
    assert pf.root.name == "cn1" and pf.parent.name == "cn1-numa0"


def test_duplicate_allocation_rows_are_one_line(sqlite_sample):
    sqlite_edit(sqlite_sample,
                "INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id,"
                " used) SELECT resource_provider_id, consumer_id, resource_class_id, used "
                "FROM allocations WHERE id = (SELECT MIN(id) FROM allocations)")
    assert "nothing was written" in refused(sqlite_sample)
    assert nothing_written()


@pytest.mark.parametrize("statement, words", [
    ("UPDATE resource_providers SET parent_provider_id = 999 WHERE name = 'cn1-numa0'",
     "parent id 999, which does not exist"),
    ("UPDATE resource_providers SET parent_provider_id = "
     "(SELECT id FROM resource_providers WHERE name = 'cn1-numa0-pf') WHERE name = 'cn1-numa0'",
     "does not reach a root"),
])
def test_broken_trees_stop_even_with_skip_invalid(sqlite_sample, statement, words):
    sqlite_edit(sqlite_sample, statement)
    out = StringIO()
    with pytest.raises(CommandError) as info:
        call_command("import_placement_db", sqlite_sample, "--skip-invalid", stdout=out)
    assert "cannot be imported" in str(info.value)
    assert words in out.getvalue()
    assert nothing_written()


def test_a_difference_found_by_verification_rolls_everything_back(sqlite_sample):
    """A database trigger makes the target keep other provider names than it was given
    (a target that does not store what it is sent): the only way to make verification
    differ without planting a bug in the importer."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("CREATE FUNCTION test_rename() RETURNS trigger AS $$ BEGIN "
                           "NEW.name := NEW.name || ' (changed)'; RETURN NEW; END $$ "
                           "LANGUAGE plpgsql")
            cursor.execute("CREATE TRIGGER test_rename BEFORE INSERT ON resource_providers "
                           "FOR EACH ROW EXECUTE FUNCTION test_rename()")
        elif connection.vendor == "mysql":   # a trigger cannot update its own table
            cursor.execute("CREATE TRIGGER test_rename BEFORE INSERT ON resource_providers "
                           "FOR EACH ROW SET NEW.name = CONCAT(NEW.name, ' (changed)')")
        else:
            cursor.execute("CREATE TRIGGER test_rename AFTER INSERT ON resource_providers "
                           "BEGIN UPDATE resource_providers SET name = NEW.name || ' (changed)' "
                           "WHERE id = NEW.id; END")
    out = StringIO()
    try:
        with pytest.raises(CommandError) as info:
            call_command("import_placement_db", sqlite_sample, stdout=out, stderr=StringIO())
    finally:
        if connection.vendor == "mysql":   # DDL: not undone with the test's transaction
            with connection.cursor() as cursor:
                cursor.execute("DROP TRIGGER test_rename")
    assert str(info.value) == ("source and target differ after writing (listed above); the "
                               "import was rolled back")
    report = out.getvalue().splitlines()
    assert [line.split()[-1] for line in report if line.startswith("resource_providers ")] \
        == ["NO"]
    assert [line.split()[-1] for line in report if line.startswith("inventories ")] == ["yes"]
    assert any(line.startswith("resource_providers: only in target: (") and "(changed)" in line
               for line in report), report
    assert nothing_written()
    assert not Inventory.objects.exists() and not Allocation.objects.exists()


def test_an_allocation_whose_provider_row_is_gone(sqlite_sample):
    sqlite_edit(sqlite_sample, "UPDATE allocations SET resource_provider_id = 999 "
                               "WHERE id = (SELECT MIN(id) FROM allocations)")
    (pk, consumer, total), = source_rows(
        sqlite_sample, "SELECT MIN(id), (SELECT consumer_id FROM allocations WHERE "
                       "resource_provider_id = 999), COUNT(*) FROM allocations")
    line = f"allocation id {pk} (consumer {consumer}, provider id 999, "
    out = StringIO()
    with pytest.raises(CommandError) as info:
        call_command("import_placement_db", sqlite_sample, "--dry-run", stdout=out)
    assert "invalid rows" in str(info.value)
    listed = [row for row in out.getvalue().splitlines() if row.startswith("invalid: ")]
    assert len(listed) == 1 and line in listed[0] and listed[0].endswith(
        "provider row is gone"), listed
    assert "invalid rows" in refused(sqlite_sample)
    assert nothing_written()

    out = StringIO()
    call_command("import_placement_db", sqlite_sample, "--skip-invalid", stdout=out)
    skipped = [row for row in out.getvalue().splitlines() if row.startswith("skipped: ")]
    assert len(skipped) == 1 and line in skipped[0]
    assert "Imported" in out.getvalue()
    assert Allocation.objects.count() == total - 1
    assert not Allocation.objects.filter(id=pk).exists()
