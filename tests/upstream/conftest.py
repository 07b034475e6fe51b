"""Placement-schema source databases for the import/export tests.

The samples are read from ../shared/upstream-db (PLACEMENT_UPSTREAM_DB overrides).

The SQLite sample is copied (tests may damage their copy); the MariaDB dump is
loaded into a database created for the test on the machine's MariaDB
(MARIADB_URL, default mysql+pymysql://root@127.0.0.1:3306), dropped afterwards.
"""
import os
import shutil
import sqlite3
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import psycopg2
import pymysql
import pytest

_NEXT_TO_REPO = Path(__file__).resolve().parents[3] / "shared" / "upstream-db"
UPSTREAM = Path(os.environ.get("PLACEMENT_UPSTREAM_DB") or (
    _NEXT_TO_REPO if _NEXT_TO_REPO.is_dir() else "/work/shared/upstream-db"))
SQLITE_SAMPLE = UPSTREAM / "sample-region.sqlite"
MARIADB_DUMP = UPSTREAM / "sample-region.mariadb.sql"
MARIADB_URL = os.environ.get("MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306")
POSTGRES_URL = os.environ.get("UPSTREAM_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432")


def _mysql_connect(database=None, **kwargs):
    parts = urlsplit(MARIADB_URL)
    return pymysql.connect(host=parts.hostname, port=parts.port or 3306,
                           user=parts.username or "root", password=parts.password or "",
                           database=database, connect_timeout=5, autocommit=True, **kwargs)


@pytest.fixture
def sqlite_sample(tmp_path):
    if not SQLITE_SAMPLE.is_file():
        pytest.skip(f"no upstream sample at {SQLITE_SAMPLE}")
    path = tmp_path / "sample-region.sqlite"
    shutil.copy(SQLITE_SAMPLE, path)
    return f"sqlite:///{path}"


@pytest.fixture
def new_mariadb():
    """new_mariadb() -> (URL, name) of a new empty MariaDB database placement_import_t_*;
    all are dropped afterwards. Skips when no MariaDB answers."""
    try:
        admin = _mysql_connect()
    except pymysql.err.Error as exc:
        pytest.skip(f"no MariaDB answers at {MARIADB_URL}: {exc}")
    created = []

    def create():
        name = f"placement_import_t_{uuid.uuid4().hex[:10]}"
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {name}")
        created.append(name)
        return f"{MARIADB_URL}/{name}", name

    try:
        yield create
    finally:
        with admin.cursor() as cursor:
            for name in created:
                cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()


@pytest.fixture(scope="session")
def mariadb_sample():
    """The MariaDB dump loaded into a new database, once per session (tests only read it)."""
    if not MARIADB_DUMP.is_file():
        pytest.skip(f"no upstream dump at {MARIADB_DUMP}")
    try:
        admin = _mysql_connect()
    except pymysql.err.Error as exc:
        pytest.skip(f"no MariaDB answers at {MARIADB_URL}: {exc}")
    name = f"placement_import_t_{uuid.uuid4().hex[:10]}"
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {name}")
    try:
        connection = _mysql_connect(name,
                                    client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS)
        with connection.cursor() as cursor:
            cursor.execute(MARIADB_DUMP.read_text())
            while cursor.nextset():
                pass
        connection.close()
        yield f"{MARIADB_URL}/{name}"
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()


@pytest.fixture
def postgres_empty():
    """URL of a new empty PostgreSQL database placement_import_t_*, dropped afterwards."""
    try:
        admin = psycopg2.connect(POSTGRES_URL + "/postgres", connect_timeout=5)
    except psycopg2.Error as exc:
        pytest.skip(f"no PostgreSQL answers at {POSTGRES_URL}: {exc}")
    admin.autocommit = True
    name = f"placement_import_t_{uuid.uuid4().hex[:10]}"
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{POSTGRES_URL}/{name}"
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


@pytest.fixture(params=["sqlite", "mariadb"])
def sample_url(request):
    """Each of the two samples Placement wrote."""
    return request.getfixturevalue(f"{request.param}_sample")


def source_rows(url, sql):
    """Rows of `sql` read straight from a source database (not through the importer)."""
    if url.startswith("sqlite:///"):
        connection = sqlite3.connect(url[len("sqlite:///"):])
        try:
            return connection.execute(sql).fetchall()
        finally:
            connection.close()
    name = urlsplit(url).path.lstrip("/")
    connection = _mysql_connect(name)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchall()
    finally:
        connection.close()


def sqlite_edit(url, *statements):
    connection = sqlite3.connect(url[len("sqlite:///"):])
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()
