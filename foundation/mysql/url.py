"""A MySQL URL (oslo.db's forms, checked by foundation.config) -> a DATABASES entry.

mysql+pymysql://user:pass@host:port/name, mysql://..., and
mysql+pymysql://user:pass@/name?unix_socket=/run/mysqld/mysqld.sock. Every session:
utf8mb4 whatever `charset=` says (MySQL's utf8 cannot hold a 4-byte character, so a
name with an emoji would fail or be cut), the strict TRADITIONAL SQL mode (a value
that does not fit is an error, never silently cut or clamped) and InnoDB for any table
created (foundation/mysql/base.py also names it in every CREATE TABLE).
"""
from urllib.parse import parse_qs, unquote, urlparse

SESSION = ("SET SESSION sql_mode = 'TRADITIONAL,ONLY_FULL_GROUP_BY', "
           "default_storage_engine = InnoDB")
DRIVER_PARAMETERS = ("unix_socket", "read_default_file", "read_default_group",
                     "connect_timeout")
SSL_PARAMETERS = {"ssl_ca": "ca", "ssl_cert": "cert", "ssl_key": "key"}


def database_entry(url, conn_max_age):
    parsed = urlparse(url)
    query = {name: values[-1] for name, values in parse_qs(parsed.query).items()}
    options = {"charset": "utf8mb4", "init_command": SESSION}
    for name in DRIVER_PARAMETERS:
        if name in query:
            options[name] = int(query[name]) if name == "connect_timeout" else query[name]
    ssl = {key: query[name] for name, key in SSL_PARAMETERS.items() if name in query}
    if ssl:
        options["ssl"] = ssl
    name = unquote(parsed.path.lstrip("/")) or "placement"
    return {
        "ENGINE": "foundation.mysql",
        "NAME": name,
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        # No host (mysql+pymysql://u:p@/db): the socket, or localhost's default socket.
        "HOST": parsed.hostname or "",
        "PORT": str(parsed.port or ""),
        "CONN_MAX_AGE": conn_max_age,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": options,
        # The test database takes the same character set and a binary collation, as
        # every table does (base.py): names compare and sort byte by byte, as on
        # PostgreSQL and SQLite.
        "TEST": {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_bin"},
    }
