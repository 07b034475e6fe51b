"""A bounded, self-emptying set of database connections per served process.

Django keeps one connection per thread and database, reused across requests
(CONN_MAX_AGE); a thread that served once keeps its connection until it serves again.
After a burst that woke every thread of every worker, the database keeps all those
sessions while nothing runs, and another node cannot connect (`too many clients`).
Django 5.2's own pool needs psycopg 3; the project speaks psycopg2. So the backend's
DatabaseWrapper takes BoundedConnections as a mixin, which makes each served process:

* hold at most [placement_database] max_pool_size connections per database: a thread
  that needs one waits up to pool_timeout, first taking over one idle between requests,
  then answering 503 (UNAVAILABLE) instead of failing on the database's limit;
* close connections idle between requests for longer than conn_max_idle (a janitor
  thread), so that the database's sessions go back after the load stops.

Only served processes (gunicorn workers: serve()) are bounded; a management command or
the test suite runs without it. Only connections marked idle at the end of a request
are ever closed by another thread, and never inside a transaction.
"""
import os
import threading
import time
import weakref

from django.core.signals import request_finished, request_started
from django.db import OperationalError, connections

from foundation import db_faults

_settings = None   # (max_pool_size, pool_timeout, conn_max_idle) once serve() ran
_budgets = {}      # alias -> threading.BoundedSemaphore
_holders = weakref.WeakSet()   # wrappers holding a permit
_lock = threading.Lock()
_janitor_pid = None


class PoolExhausted(OperationalError):
    placement_kind = db_faults.UNAVAILABLE


def serve(max_pool_size, pool_timeout, conn_max_idle):
    """Bound this process's connections and start its janitor (a gunicorn worker)."""
    global _settings, _janitor_pid
    _settings = (max_pool_size, pool_timeout, conn_max_idle)
    _budgets.clear()
    request_started.connect(_request_started, dispatch_uid="placement_pool_start")
    request_finished.connect(_request_finished, dispatch_uid="placement_pool_finish")
    if _janitor_pid != os.getpid():
        _janitor_pid = os.getpid()
        threading.Thread(target=_janitor, name="placement-db-janitor", daemon=True).start()


def _budget(alias):
    with _lock:
        if alias not in _budgets:
            _budgets[alias] = threading.BoundedSemaphore(_settings[0])
        return _budgets[alias]


def _release_idle(wrapper, older_than=0.0):
    """Close `wrapper`'s connection if it is idle between requests; True if it did."""
    with wrapper.placement_pool_lock:
        idle_since = wrapper.placement_idle_since
        if (not wrapper.placement_permit or idle_since is None
                or time.monotonic() - idle_since < older_than
                or wrapper.in_atomic_block or wrapper.connection is None):
            return False
        try:
            wrapper.connection.close()   # the raw connection; its thread reopens later
        except Exception:
            pass
        wrapper.placement_closed_idle = True
        wrapper.placement_permit = False
        _holders.discard(wrapper)
        _budget(wrapper.alias).release()
        return True


def _take_over_idle(alias):
    return any(_release_idle(wrapper) for wrapper in list(_holders)
               if wrapper.alias == alias)


def _janitor():
    while True:
        idle_limit = _settings[2]
        time.sleep(max(0.5, min(idle_limit / 2, 5.0)))
        for wrapper in list(_holders):
            _release_idle(wrapper, older_than=idle_limit)


def _request_started(**kwargs):
    for wrapper in connections.all(initialized_only=True):
        if not isinstance(wrapper, BoundedConnections):
            continue
        with wrapper.placement_pool_lock:
            wrapper.placement_idle_since = None
            closed_by_janitor = not wrapper.placement_permit and wrapper.connection
        if closed_by_janitor:
            wrapper.close()   # Django connects afresh at the first query


def _request_finished(**kwargs):
    for wrapper in connections.all(initialized_only=True):
        if isinstance(wrapper, BoundedConnections):
            with wrapper.placement_pool_lock:
                wrapper.placement_idle_since = time.monotonic()


class BoundedConnections:
    """DatabaseWrapper mixin: a permit of the process's budget per open connection."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.placement_pool_lock = threading.Lock()
        self.placement_permit = False
        self.placement_idle_since = None
        self.placement_closed_idle = False   # the janitor closed the raw connection

    def get_new_connection(self, conn_params):
        if _settings is not None and not self.placement_permit:
            self._take_permit()
        try:
            raw = super().get_new_connection(conn_params)
        except BaseException:
            self._drop_permit()
            raise
        self.placement_closed_idle = False
        return raw

    def _take_permit(self):
        budget = _budget(self.alias)
        deadline = time.monotonic() + _settings[1]
        while not budget.acquire(timeout=0.05):
            if _take_over_idle(self.alias):
                continue
            if time.monotonic() > deadline:
                raise PoolExhausted(f"no free connection to {self.alias} within "
                                    f"{_settings[1]:g} s (max_pool_size {_settings[0]})")
        with self.placement_pool_lock:
            self.placement_permit = True
            self.placement_idle_since = None
        _holders.add(self)

    def _drop_permit(self):
        with self.placement_pool_lock:
            if not self.placement_permit:
                return
            self.placement_permit = False
        _holders.discard(self)
        _budget(self.alias).release()

    def _close(self):
        try:
            # Under the janitor's lock, and not twice: PyMySQL raises on a second close.
            with self.placement_pool_lock:
                if not self.placement_closed_idle:
                    super()._close()
        finally:
            self._drop_permit()


def connection_budget(max_pool_size, workers, threads, nodes):
    """How many sessions the API nodes may open: nodes x workers x per-process bound."""
    return nodes * workers * min(threads, max_pool_size)
