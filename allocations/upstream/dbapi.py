"""Connections to a Placement database given as Placement's `connection` URL.

    mysql+pymysql://user:pw@host[:port]/db   MariaDB / MySQL through PyMySQL
    postgresql://user:pw@host[:port]/db      PostgreSQL through psycopg2
    sqlite:///relative/path  sqlite:////absolute/path

A Database wraps one DB-API connection with what the three drivers do
differently: placeholders, streaming cursors, snapshots, catalog queries.
Driver errors are turned into UpstreamError (one line, no traceback).
"""
import sqlite3
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote, urlsplit

import psycopg2
import pymysql
import pymysql.cursors

from allocations.upstream import UpstreamError

SCHEMES = {
    "sqlite": "sqlite",
    "mysql": "mysql", "mysql+pymysql": "mysql", "mariadb": "mysql", "mariadb+pymysql": "mysql",
    "postgresql": "postgresql", "postgres": "postgresql", "postgresql+psycopg2": "postgresql",
}
DRIVER_ERRORS = (sqlite3.Error, pymysql.err.Error, psycopg2.Error)


def one_line(exc):
    """A driver exception as a single line."""
    text = " ".join(str(exc).split())
    if isinstance(exc, pymysql.err.Error) and len(exc.args) == 2:
        text = " ".join(str(exc.args[1]).split())
    return text or type(exc).__name__


def redacted(url):
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return parts._replace(netloc=netloc).geturl()
    return url


def dialect_of(url):
    scheme = urlsplit(url).scheme.lower()
    if scheme not in SCHEMES:
        supported = ", ".join(("mysql+pymysql://", "postgresql://", "sqlite:///"))
        raise UpstreamError(f"unknown URL scheme {scheme!r} in {redacted(url)!r} "
                            f"(supported: {supported})")
    return SCHEMES[scheme]


def to_utc(value):
    """A timestamp as read from any driver -> naive UTC datetime (or None)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is not None:
        value = value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


class Database:
    """One connection to a Placement-schema database."""

    def __init__(self, url, *, must_exist=True):
        self.url = url
        self.dialect = dialect_of(url)
        try:
            self.connection = getattr(self, f"_connect_{self.dialect}")(
                urlsplit(url), must_exist)
        except DRIVER_ERRORS as exc:
            raise UpstreamError(f"cannot connect to {redacted(url)}: {one_line(exc)}")
        self.param = "?" if self.dialect == "sqlite" else "%s"

    # --- connecting -------------------------------------------------------------------
    @staticmethod
    def _connect_sqlite(parts, must_exist):
        path = unquote(parts.path)[1:] if parts.path.startswith("/") else unquote(parts.path)
        if parts.netloc:
            path = parts.netloc + "/" + path
        if not path:
            raise UpstreamError("sqlite URL without a file path (sqlite:///path/to/file)")
        if must_exist and not Path(path).is_file():
            raise UpstreamError(f"cannot connect to sqlite:///{path}: no such file")
        mode = "ro" if must_exist else "rwc"
        connection = sqlite3.connect(f"file:{Path(path).absolute()}?mode={mode}", uri=True,
                                     isolation_level=None, check_same_thread=False)
        return connection

    @staticmethod
    def _connect_mysql(parts, must_exist):
        return pymysql.connect(
            host=parts.hostname or "localhost", port=parts.port or 3306,
            user=unquote(parts.username or ""), password=unquote(parts.password or ""),
            database=unquote(parts.path.lstrip("/")) or None, charset="utf8mb4",
            connect_timeout=10, autocommit=True)

    @staticmethod
    def _connect_postgresql(parts, must_exist):
        connection = psycopg2.connect(
            host=parts.hostname or None, port=parts.port or None,
            user=unquote(parts.username or "") or None,
            password=unquote(parts.password or "") or None,
            dbname=unquote(parts.path.lstrip("/")) or None, connect_timeout=10)
        return connection

    def close(self):
        with suppress(DRIVER_ERRORS):
            self.connection.close()

    # --- transactions -----------------------------------------------------------------
    def begin_snapshot(self):
        """Start the single read-only, repeatable-read transaction all reads run in."""
        if self.dialect == "sqlite":
            self.execute("BEGIN")  # a read transaction sees one snapshot until it ends
        elif self.dialect == "mysql":
            self.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            self.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        else:
            self.connection.rollback()  # the catalog reads opened a transaction already
            self.connection.set_session(isolation_level="REPEATABLE READ", readonly=True)

    def end(self):
        with suppress(DRIVER_ERRORS):
            self.connection.rollback()

    def begin_write(self):
        if self.dialect == "sqlite":
            self.execute("BEGIN")
        elif self.dialect == "mysql":
            self.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')")
            self.execute("START TRANSACTION")

    def commit(self):
        self.connection.commit()

    # --- statements -------------------------------------------------------------------
    def sql(self, text):
        """`text` written with %s placeholders, in this driver's placeholder style."""
        return text.replace("%s", self.param)

    def execute(self, text, params=()):
        try:
            cursor = self.connection.cursor()
            cursor.execute(self.sql(text), params)
            return cursor
        except DRIVER_ERRORS as exc:
            raise UpstreamError(f"{redacted(self.url)}: {one_line(exc)}")

    def all(self, text, params=()):
        cursor = self.execute(text, params)
        rows = cursor.fetchall()
        cursor.close()
        return rows

    def executemany(self, text, rows):
        try:
            cursor = self.connection.cursor()
            if self.dialect == "postgresql":
                from psycopg2.extras import execute_values
                head = text.split(" VALUES ")[0]
                execute_values(cursor, head + " VALUES %s", rows, page_size=1000)
            else:
                cursor.executemany(self.sql(text), rows)
            cursor.close()
        except DRIVER_ERRORS as exc:
            raise UpstreamError(f"{redacted(self.url)}: {one_line(exc)}")

    @contextmanager
    def _streaming_cursor(self):
        if self.dialect == "mysql":
            cursor = self.connection.cursor(pymysql.cursors.SSCursor)  # unbuffered
        elif self.dialect == "postgresql":
            cursor = self.connection.cursor(name="placement_import_stream")  # server-side
        else:
            cursor = self.connection.cursor()  # sqlite3 steps through the result lazily
        try:
            yield cursor
        finally:
            cursor.close()

    def stream(self, text, params=(), batch_size=5000):
        """Yield lists of at most batch_size rows; memory never holds more than one batch."""
        try:
            with self._streaming_cursor() as cursor:
                cursor.execute(self.sql(text), params)
                while True:
                    rows = cursor.fetchmany(batch_size)
                    if not rows:
                        break
                    yield rows
        except DRIVER_ERRORS as exc:
            raise UpstreamError(f"{redacted(self.url)}: {one_line(exc)}")

    # --- catalog ----------------------------------------------------------------------
    def table_columns(self):
        """{table: set(columns)} of the tables in this database."""
        if self.dialect == "sqlite":
            tables = [r[0] for r in self.all(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {t: {r[1] for r in self.all(f'PRAGMA table_info("{t}")')} for t in tables}
        if self.dialect == "mysql":
            rows = self.all("SELECT table_name, column_name FROM information_schema.columns "
                            "WHERE table_schema = DATABASE()")
        else:
            rows = self.all("SELECT table_name, column_name FROM information_schema.columns "
                            "WHERE table_schema = current_schema()")
        found = {}
        for table, column in rows:
            found.setdefault(table, set()).add(column)
        return found
