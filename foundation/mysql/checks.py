"""Is the MySQL/MariaDB server fit to hold Placement's data? Asked once at start.

What the sessions cannot set for themselves (foundation/mysql/url.py sets utf8mb4, the
strict mode and InnoDB in every session) and what would silently lose data or
guarantees if wrong: a server too old for the SQL used (window functions, RETURNING on
MariaDB, CHECK constraints), a session that is not strict after all (a proxy that
rewrites or drops the SET), no InnoDB, a table of ours in another engine (a restore
into MyISAM: no transactions, no row locks, not replicated by Galera), a Galera node
that does not replicate rows.
"""
OLDEST_MARIADB = (10, 6)
OLDEST_MYSQL = (8, 0)


def problems(cursor):
    """Each problem found, as one short phrase (empty: the server is fit)."""
    found = []
    cursor.execute("SELECT VERSION(), @@SESSION.sql_mode")
    version, sql_mode = cursor.fetchone()
    numbers = tuple(int(part) for part in version.split("-")[0].split(".")[:2])
    mariadb = "mariadb" in version.lower()
    oldest = OLDEST_MARIADB if mariadb else OLDEST_MYSQL
    if numbers < oldest:
        found.append(f"server {version} is older than {'MariaDB' if mariadb else 'MySQL'} "
                     f"{'.'.join(map(str, oldest))}")
    modes = set(sql_mode.upper().split(","))
    if not modes & {"STRICT_TRANS_TABLES", "STRICT_ALL_TABLES"}:
        found.append(f"the session's sql_mode is not strict ({sql_mode or 'empty'}): "
                     "a value that does not fit would be cut instead of refused")
    cursor.execute("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'InnoDB'")
    support = cursor.fetchone()
    if support is None or support[0] not in ("YES", "DEFAULT"):
        found.append("InnoDB is not available")
    cursor.execute("SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES "
                   "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' "
                   "AND ENGINE <> 'InnoDB' ORDER BY TABLE_NAME")
    others = cursor.fetchall()
    if others:
        found.append("tables not in InnoDB: " + ", ".join(f"{t} ({e})" for t, e in others[:5]))
    cursor.execute("SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'binlog_format')")
    variables = {name.lower(): str(value).upper() for name, value in cursor.fetchall()}
    if variables.get("wsrep_on") == "ON" and variables.get("binlog_format") != "ROW":
        found.append("a Galera node with binlog_format "
                     f"{variables.get('binlog_format')}, not ROW")
    return found


def check_at_start(connection):
    """Stop the start with one line when the server is unfit; a server that does not
    answer is not this check's business (the requests answer 503 until it does)."""
    from django.db import OperationalError

    from foundation import config

    if connection.vendor != "mysql":
        return
    try:
        with connection.cursor() as cursor:
            found = problems(cursor)
    except OperationalError:
        return
    except RuntimeError:   # pytest-django's refusal when a test module imports the WSGI app
        return
    if found:
        config.stop(config.ConfigError(
            "[placement_database] connection: the MySQL/MariaDB server is not fit: "
            + "; ".join(found) + " (docs/operators/mariadb.md)"))
