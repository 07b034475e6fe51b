"""Which MySQL driver a process uses: [placement_database] mysql_driver.

"auto" (the default) takes mysqlclient when it is installed, else PyMySQL; naming one
insists on it. One driver per process: Django imports whichever answers to `MySQLdb`.
"""
import importlib.util

from django.core.exceptions import ImproperlyConfigured

DRIVERS = ("auto", "mysqlclient", "pymysql")


def mysqlclient_installed():
    # PyMySQL's shim also answers to MySQLdb once installed: look for the real package
    spec = importlib.util.find_spec("MySQLdb")
    return spec is not None and spec.origin is not None and "pymysql" not in spec.origin


def chosen_driver(setting):
    """"mysqlclient" or "pymysql" for the setting ("auto", "mysqlclient", "pymysql")."""
    if setting == "pymysql":
        return "pymysql"
    if mysqlclient_installed():
        return "mysqlclient"
    if setting == "mysqlclient":
        raise ImproperlyConfigured(
            "[placement_database] mysql_driver = mysqlclient, but mysqlclient is not "
            "installed (pip install mysqlclient; it needs libmariadb-dev or "
            "libmysqlclient-dev and pkg-config to build)")
    return "pymysql"
