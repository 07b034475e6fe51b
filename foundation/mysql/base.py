"""Django's MySQL backend, every table InnoDB, utf8mb4, binary collation.

The driver ([placement_database] mysql_driver, driver.py): mysqlclient, the C driver
Django recommends, when it is installed (scripts/bootstrap builds it where it can; it
decodes rows several times faster than PyMySQL: docs/performance.md), else PyMySQL, pure
Python, which needs no compiler nor the client library's headers. Either serves every
URL form oslo.db's deployment tools write (mysql+pymysql://, mysql://): the URL names a
database, the setting a driver. Django speaks to PyMySQL through its MySQLdb
compatibility (install_as_MySQLdb), as to mysqlclient.

Tables: ENGINE=InnoDB (row locks, transactions; Galera replicates only InnoDB),
utf8mb4 (4-byte characters) and utf8mb4_bin, whatever the database's defaults: a
deployment tool's `CREATE DATABASE placement` gets the server's defaults (often utf8 and
a case-insensitive collation), under which "rp-A" and "rp-a" would be one name where
PostgreSQL and SQLite see two, and the API would answer differently per database.
"""
import decimal
import math
import sys
import time

from django.conf import settings

from foundation.mysql.driver import chosen_driver

DRIVER = chosen_driver(settings.PLACEMENT_MYSQL_DRIVER)
if DRIVER == "pymysql":
    import pymysql
    from pymysql import connections, constants, converters, cursors, err, times
    from pymysql.constants import CLIENT, FIELD_TYPE

    pymysql.install_as_MySQLdb()
    # Django imports MySQLdb.constants, MySQLdb.converters ...: without these entries
    # Python would load PyMySQL's modules a second time under those names, and rebind
    # pymysql.err to the copy, whose exception classes are not the ones the driver raises
    # (an `except pymysql.err.Error` elsewhere, as in the importer, would then miss them).
    for _module in (connections, constants, converters, cursors, err, times, CLIENT,
                    FIELD_TYPE):
        sys.modules[_module.__name__.replace("pymysql", "MySQLdb", 1)] = _module
else:
    from MySQLdb.constants import FIELD_TYPE

from django.db.backends.mysql import base, operations, schema  # noqa: E402  (after the shim)

from foundation import db_faults  # noqa: E402
from foundation.db_faults import CommitGuard  # noqa: E402
from foundation.db_pool import BoundedConnections  # noqa: E402

TABLE_OPTIONS = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"


class DatabaseSchemaEditor(schema.DatabaseSchemaEditor):
    sql_create_table = schema.DatabaseSchemaEditor.sql_create_table + TABLE_OPTIONS


def _decimal(text):
    """A DECIMAL value: an int when it has no fraction. MySQL's SUM() of integer
    columns is a DECIMAL (PostgreSQL's and SQLite's an integer), and usage must reach
    the API and the UI as the integer it is; a DecimalField's converter takes an int.
    (PyMySQL hands the converter text, mysqlclient bytes.)"""
    if isinstance(text, bytes):
        text = text.decode("ascii")
    return int(text) if "." not in text else decimal.Decimal(text)


# Django's i-lookups on MySQL lean on a case-insensitive collation; under utf8mb4_bin
# both sides are lowered, as PostgreSQL's backend does with UPPER().
CASE_INSENSITIVE = ("iexact", "icontains", "istartswith", "iendswith")


class DatabaseOperations(operations.DatabaseOperations):

    def lookup_cast(self, lookup_type, internal_type=None):
        if lookup_type in CASE_INSENSITIVE and internal_type != "JSONField":
            return "LOWER(%s)"
        return super().lookup_cast(lookup_type, internal_type)


class DatabaseWrapper(CommitGuard, BoundedConnections, base.DatabaseWrapper):
    """Also, as on PostgreSQL: no commit past the request's deadline (db_faults), a
    bounded, self-emptying set of connections in served processes (db_pool), and the
    session's statement and lock time limits ([placement_database] statement_timeout,
    lock_timeout)."""

    SchemaEditorClass = DatabaseSchemaEditor
    ops_class = DatabaseOperations
    operators = {**base.DatabaseWrapper.operators,
                 **{name: "LIKE LOWER(%s)" for name in CASE_INSENSITIVE}}
    pattern_ops = {**base.DatabaseWrapper.pattern_ops,
                   **{name: f"LIKE LOWER({pattern[len('LIKE '):]})"
                      for name, pattern in base.DatabaseWrapper.pattern_ops.items()
                      if name in CASE_INSENSITIVE}}

    def get_connection_params(self):
        params = super().get_connection_params()
        params["conv"] = {**params["conv"], FIELD_TYPE.NEWDECIMAL: _decimal,
                          FIELD_TYPE.DECIMAL: _decimal}
        # A frozen or cut-off server answers nothing: wait at most this long for it.
        # Connecting too: PyMySQL waits 10 s by default, mysqlclient's C library for ever.
        params.setdefault("connect_timeout", CONNECT_TIMEOUT)
        round_trip = settings.PLACEMENT_DB_ROUND_TRIP_TIMEOUT
        if round_trip:
            params.setdefault("read_timeout", round_trip)
            params.setdefault("write_timeout", round_trip)
        return driver_params(params)

    def init_connection_state(self):
        super().init_connection_state()
        statements = time_limits(self.mysql_is_mariadb, **settings.PLACEMENT_DB_TIME_LIMITS)
        with self.connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
            self.placement_server = server_identity(cursor)

    # --- a lost COMMIT's lookup (foundation/db_faults.py) ------------------------------

    def commit_facts(self):
        return self.connection.thread_id(), self.placement_server

    def lookup_connection(self):
        left = db_faults.lookup_time_left.get()
        params = {**self.get_connection_params(), "read_timeout": left,
                  "write_timeout": left,
                  "connect_timeout": max(1, min(left, params_connect_timeout(self)))}
        return self.Database.connect(**driver_params(params))

    def outcome_on(self, raw, facts, marker):
        """Our old session, when it is still there, may still be committing: it is
        ended first (a thread id is only ours on the same server, never restarted
        since: server_identity). Then the transaction's marker tells."""
        thread_id, server = facts
        with raw.cursor() as cursor:
            now = server_identity(cursor)
            if now[:2] == server[:2] and abs(now[2] - server[2]) <= 2:
                cursor.execute("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = %s",
                               [thread_id])
                if cursor.fetchone():
                    cursor.execute(f"KILL {int(thread_id)}")
                    return db_faults.PENDING
            if marker is not None:
                return db_faults.marker_found(cursor, marker)
        return None


def server_identity(cursor):
    """(host name, port, start time to the second) of the server: a restart, or another
    server behind the same address, is not the one a thread id was given by. SHOW, not
    SELECT: a Galera node outside the primary component refuses a SELECT."""
    cursor.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('hostname', 'port')")
    variables = dict(cursor.fetchall())
    cursor.execute("SHOW GLOBAL STATUS WHERE Variable_name = 'Uptime'")
    uptime = int(cursor.fetchone()[1])
    return variables.get("hostname"), variables.get("port"), round(time.time()) - uptime


TIMEOUTS = ("connect_timeout", "read_timeout", "write_timeout")
CONNECT_TIMEOUT = 10   # seconds, unless the URL's connect_timeout says otherwise


def driver_params(params, driver=None):
    """The connection parameters as the driver takes them: mysqlclient's timeouts are
    whole seconds (an int; a float is refused), rounded up, at least 1; PyMySQL's may
    be fractions."""
    if (driver or DRIVER) != "mysqlclient":
        return params
    return {**params, **{name: max(1, math.ceil(params[name]))
                         for name in TIMEOUTS if params.get(name) is not None}}


def params_connect_timeout(wrapper):
    return float(wrapper.settings_dict["OPTIONS"].get("connect_timeout", CONNECT_TIMEOUT))


def time_limits(mariadb, statement_timeout, lock_timeout, idle_in_transaction_timeout=0):
    """The SET statements of the session's time limits (0: the server's own). MariaDB's
    max_statement_time covers every statement; MySQL's max_execution_time only SELECTs
    (a write there is bounded by the lock wait and the commit deadline). The lock wait
    is whole seconds, at least 1; so is MariaDB's idle_transaction_timeout (MySQL has
    none)."""
    statements = []
    if statement_timeout:
        statements.append(f"SET SESSION max_statement_time = {float(statement_timeout)}"
                          if mariadb else
                          f"SET SESSION max_execution_time = {int(statement_timeout * 1000)}")
    if lock_timeout:
        statements.append("SET SESSION innodb_lock_wait_timeout = "
                          f"{max(1, math.ceil(lock_timeout))}")
    if idle_in_transaction_timeout and mariadb:
        statements.append("SET SESSION idle_transaction_timeout = "
                          f"{max(1, math.ceil(idle_in_transaction_timeout))}")
    return statements
