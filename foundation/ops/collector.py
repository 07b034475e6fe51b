"""Python's cyclic garbage collector in a worker: the two rules that keep it off the
answer's path.

Large answers (thousands of candidates, every provider of a cloud) are built from
hundreds of thousands of small dicts, lists and tuples. None of them form cycles, yet
building them triggers the collector over and over, and each full collection walks every
object the process holds: Django, DRF, oslo's policy rules, the URL table and every view,
some 110,000 objects before the first request.

- freeze_startup_objects(): once per worker, once everything is loaded, those objects
  move out of the collector's reach (gc.freeze), so a full collection walks only what
  requests are building. GET /resource_providers at 7,000 providers: medians that swung
  between ~50 and ~100 ms and spikes of 110-125 ms, steady at ~50 ms with spikes of 65-70.
- paused(): around a request that builds a large answer (allocation candidates, the
  operator UI's candidates explorer and "why not?"), the
  collector does not run at all.
"""
import gc
import threading
from contextlib import contextmanager

from django.urls import get_resolver

_pause_lock = threading.Lock()
_pausing = 0            # requests of this process inside paused()
_enable_after = False   # the collector was on when the first of them paused it


@contextmanager
def paused():
    """No cyclic collection while the block runs. The collector is process-wide: with
    threaded workers it stays off until the last of the requests pausing it ends (each
    turning it back on at its own end would let it run inside the others)."""
    global _pausing, _enable_after
    with _pause_lock:
        if _pausing == 0:
            _enable_after = gc.isenabled()
            gc.disable()
        _pausing += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pausing -= 1
            if _pausing == 0 and _enable_after:
                gc.enable()


def freeze_startup_objects():
    """Load what a worker loads on its first request (the URL table imports every
    view), then move every object alive now out of the collector's reach (gunicorn's
    post_worker_init calls this)."""
    get_resolver().url_patterns
    gc.collect()
    gc.freeze()
