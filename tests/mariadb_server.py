"""Private MariaDB servers for the tests that replicate, stop or kill their database
(tests/api/test_mysql_replica.py): mariadb-install-db into a directory of the test's,
mariadbd as the mysql user on a port of its own. As scripts/galera-cluster does for
Galera: the directory belongs to mysql, root connects over the socket, root@127.0.0.1
(no password) over TCP.
"""
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pymysql

MARIADBD = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
INSTALL_DB = shutil.which("mariadb-install-db") or "/usr/bin/mariadb-install-db"


def why_not():
    """Why private MariaDB servers cannot be started here, or None."""
    for binary in (MARIADBD, INSTALL_DB):
        if not os.path.exists(binary):
            return f"no {Path(binary).name} (Debian's mariadb-server)"
    if os.geteuid() != 0:
        return "the servers' data directories must be given to the mysql user (root)"
    return None


def root_sql(statement, params=(), **where):
    """The rows of one statement, run as root (no password) in autocommit on the server
    `where` names (pymysql.connect's host and port, or unix_socket; and database)."""
    db = pymysql.connect(user="root", autocommit=True, connect_timeout=5, **where)
    try:
        with db.cursor() as cursor:
            cursor.execute(statement, params)
            return cursor.fetchall()
    finally:
        db.close()


class MariaDBServer:
    """One mariadbd: its files under `home`, SQL on 127.0.0.1:port; `settings` are
    added to its [mysqld] section."""

    def __init__(self, home, port, settings=""):
        self.home, self.port = Path(home), port
        self.data, self.socket = self.home / "data", self.home / "mysqld.sock"
        self.process = None
        self.home.mkdir(parents=True)
        (self.home / "my.cnf").write_text(f"""[mysqld]
user=mysql
datadir={self.data}
socket={self.socket}
pid-file={self.home}/mysqld.pid
log-error={self.home}/error.log
tmpdir={self.home}
port={port}
bind-address=127.0.0.1
skip-name-resolve
character-set-server=utf8mb4
collation-server=utf8mb4_general_ci
default_storage_engine=InnoDB
innodb_buffer_pool_size=48M
# a test's data need not outlive a crash of the machine
innodb_flush_log_at_trx_commit=0
sync_binlog=0
{settings}""")

    def install(self):
        """The system tables, in a new data directory the mysql user owns."""
        shutil.chown(self.home, "mysql", "mysql")
        done = subprocess.run([INSTALL_DB, f"--defaults-file={self.home / 'my.cnf'}",
                               "--auth-root-authentication-method=socket", "--skip-test-db"],
                              capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"mariadb-install-db failed: {done.stdout}{done.stderr}")

    def copy_install(self, other):
        """The system tables of `other` (installed, never started): quicker than a
        second mariadb-install-db."""
        shutil.copytree(other.data, self.data, symlinks=True)
        subprocess.run(["chown", "-R", "mysql:mysql", str(self.home)], check=True)

    def start(self, seconds=60):
        with open(self.home / "mariadbd.out", "a") as out:
            self.process = subprocess.Popen(
                [MARIADBD, f"--defaults-file={self.home / 'my.cnf'}"],
                stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.sql("SELECT 1")
                return
            except pymysql.err.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mariadbd on port {self.port} did not start: "
                                       + self.log_tail()) from None
                time.sleep(0.2)

    def kill(self):
        """Stop it hard (kill -9), as a crash would; nothing when it is not running."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def log_tail(self, lines=20):
        path = self.home / "error.log"
        return "\n".join(path.read_text().splitlines()[-lines:]) if path.exists() else ""

    def sql(self, statement, params=(), database=None):
        """The rows of one statement, run as root over the socket in autocommit."""
        return root_sql(statement, params, unix_socket=str(self.socket), database=database)

    def url(self, database):
        return f"mysql+pymysql://root@127.0.0.1:{self.port}/{database}?charset=utf8"


class ReplicaPair:
    """A primary with its binary log and a read-only replica of it (row-based
    replication by GTID), each under `directory`."""

    def __init__(self, directory, primary_port, replica_port):
        self.directory = directory
        self.primary = MariaDBServer(directory / "primary", primary_port,
                                     "server_id=1\nlog_bin=binlog\nbinlog_format=ROW\n")
        self.replica = MariaDBServer(directory / "replica", replica_port,
                                     "server_id=2\nread_only=ON\nrelay_log=relay\n")

    def start(self):
        self.primary.install()
        self.replica.copy_install(self.primary)
        self.primary.start()
        self.replica.start()
        # Written to the binary log: the replica, replaying it from the start, gets the
        # user too (and connects to the primary as it).
        self.primary.sql("CREATE USER 'root'@'127.0.0.1'")
        self.primary.sql("GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION")
        self.replica.sql(
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = %s, "
            "MASTER_USER = 'root', MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1",
            [self.primary.port])
        self.replica.sql("START SLAVE")
        self.wait_replicated()

    def stop(self):
        """Both killed: their data is thrown away, a clean shutdown would only take time."""
        self.replica.kill()
        self.primary.kill()

    def wait_replicated(self, seconds=30):
        """Until the replica has applied all the primary has written."""
        position = self.primary.sql("SELECT @@GLOBAL.gtid_binlog_pos")[0][0]
        waited = self.replica.sql("SELECT MASTER_GTID_WAIT(%s, %s)", [position, seconds])
        if waited[0][0] != 0:
            status = self.replica.sql("SHOW REPLICA STATUS")
            raise TimeoutError(f"the replica did not reach {position}: {status}")
