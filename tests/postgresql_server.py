"""A private PostgreSQL server for the tests that stop, lock or replicate their database
(tests/faults, tests/scaling): initdb into a directory of the test's, pg_ctl, and
queries as the postgres superuser. When the tests run as root, every command runs as
the postgres user (PostgreSQL refuses to run as root) and the directories are theirs.
"""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg2
import pytest


def server_binaries(*needed):
    """The newest installed PostgreSQL's bin directory; the test is skipped, saying why,
    when it or one of `needed` (e.g. "pg_basebackup") is missing, or when we are root
    and there is no postgres user to run the server as."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    bindir = Path(found[-1]).parent if found else None
    missing = [name for name in ("initdb", "pg_ctl", *needed)
               if bindir is None or not (bindir / name).exists()]
    if missing:
        pytest.skip(f"PostgreSQL's server binaries ({', '.join(missing)}) are not installed")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run PostgreSQL")
    return bindir


def work_directory(prefix):
    """A new directory under the temporary directory that the postgres user owns."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(workdir, 0o755)
    if os.geteuid() == 0:
        shutil.chown(workdir, "postgres", "postgres")
    return workdir


def as_postgres(*command):
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return [*prefix, *map(str, command)]


class PostgresServer:
    """One server: its data in `data`, its log in `log`, listening on 127.0.0.1:port
    (its socket in the data's parent directory)."""

    def __init__(self, bindir, data, port, log):
        self.bindir, self.data, self.port, self.log = bindir, Path(data), port, Path(log)

    def run(self, *command):
        subprocess.run(as_postgres(*command), check=True, cwd="/",
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def initdb(self, settings=""):
        """A new cluster, trusting local connections, fsync off (a test's data need
        not outlive a crash of the machine); `settings` are added to postgresql.conf."""
        self.run(self.bindir / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust",
                 "-E", "UTF8", "--no-sync", "--locale=C")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                       f"unix_socket_directories = '{self.data.parent}'\n"
                       f"fsync = off\ntimezone = 'UTC'\n{settings}")

    def pg_ctl(self, action, *extra):
        self.run(self.bindir / "pg_ctl", "-D", self.data, "-w", "-t", "60", "-l", self.log,
                 action, *extra)

    def start(self):
        self.pg_ctl("start")

    def stop(self, mode="fast"):
        self.pg_ctl("stop", "-m", mode)

    def stop_quietly(self):
        """At the end of a session: immediately, and not at all when it is not running."""
        if (self.data / "postmaster.pid").exists():
            subprocess.run(as_postgres(self.bindir / "pg_ctl", "-D", self.data, "-m",
                                       "immediate", "stop"),
                           cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def url(self, database):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def connect(self, database="postgres"):
        return psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres",
                                dbname=database, connect_timeout=5)

    def query(self, sql, params=(), database="postgres"):
        """The rows of one statement run outside a transaction (None when it has none)."""
        conn = self.connect(database)
        try:
            conn.autocommit = True
            with conn.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall() if cursor.description else None
        finally:
            conn.close()
