"""[placement_database] mysql_driver: mysqlclient when installed (auto), else PyMySQL;
either serves every URL form, mysql+pymysql:// included (foundation/mysql/driver.py)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from foundation.mysql import driver

ROOT = Path(__file__).resolve().parents[2]


def test_auto_takes_mysqlclient_only_when_it_is_installed(monkeypatch):
    monkeypatch.setattr(driver, "mysqlclient_installed", lambda: True)
    assert driver.chosen_driver("auto") == "mysqlclient"
    assert driver.chosen_driver("pymysql") == "pymysql"
    monkeypatch.setattr(driver, "mysqlclient_installed", lambda: False)
    assert driver.chosen_driver("auto") == "pymysql"
    with pytest.raises(ImproperlyConfigured, match="mysqlclient is not installed"):
        driver.chosen_driver("mysqlclient")


def _backend_driver(setting, url="mysql+pymysql://placement:secret@127.0.0.1:1/placement"):
    """The module Django's MySQL backend imports as MySQLdb, in a fresh process whose
    settings say `setting` (nothing connects: the backend is only loaded)."""
    env = dict(os.environ, DATABASE_URL=url, DATABASE_MYSQL_DRIVER=setting,
               DJANGO_SETTINGS_MODULE="placement_site.settings")
    env.pop("DATABASE_REPLICA_URLS", None)
    code = ("import django; django.setup(); from django.db import connection; "
            "print(connection.Database.__name__, connection.vendor)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_backend_loads_the_chosen_driver_for_a_pymysql_url():
    assert _backend_driver("pymysql") == ["pymysql", "mysql"]
    expected = "MySQLdb" if driver.mysqlclient_installed() else "pymysql"
    assert _backend_driver("auto") == [expected, "mysql"]
    assert _backend_driver("auto", "mysql://placement@127.0.0.1:1/placement") == [
        expected, "mysql"]


def test_a_setting_outside_the_choices_is_refused():
    env = dict(os.environ, DATABASE_MYSQL_DRIVER="oursql",
               DJANGO_SETTINGS_MODULE="placement_site.settings")
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "mysql_driver" in done.stderr


@pytest.mark.skipif(not driver.mysqlclient_installed(), reason="mysqlclient not installed")
@pytest.mark.parametrize("code, kind", [(2013, "unavailable"), (1969, "timed out"),
                                        (1205, "lock timeout"), (1062, None)])
def test_mysqlclient_errors_are_told_apart_as_pymysql_ones_are(code, kind):
    """A database failure raised by mysqlclient is answered as the same one raised by
    PyMySQL (a 503, a 409 ...): foundation/db_faults.py knows both drivers' errors."""
    import MySQLdb
    import pymysql
    from django.db.utils import OperationalError

    from foundation import db_faults

    def wrapped(cause):
        exc = OperationalError(*cause.args)
        exc.__cause__ = cause
        return exc

    assert db_faults.kind(wrapped(MySQLdb.OperationalError(code, "x"))) == kind
    assert db_faults.kind(wrapped(pymysql.err.OperationalError(code, "x"))) == kind


def test_mysqlclient_gets_its_time_limits_in_whole_seconds():
    """mysqlclient refuses a float timeout (every connection would fail); PyMySQL takes
    fractions. Rounded up, at least a second: never shorter than configured."""
    from foundation.mysql.base import driver_params

    params = {"connect_timeout": 2, "read_timeout": 40.0, "write_timeout": 0.25,
              "charset": "utf8mb4"}
    assert driver_params(params, "mysqlclient") == {
        "connect_timeout": 2, "read_timeout": 40, "write_timeout": 1, "charset": "utf8mb4"}
    assert all(isinstance(value, int) for value in
               driver_params(params, "mysqlclient").values() if value != "utf8mb4")
    assert driver_params(params, "pymysql") == params
