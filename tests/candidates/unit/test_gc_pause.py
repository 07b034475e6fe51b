"""The cyclic collector pause of GET /allocation_candidates under threaded workers."""
import gc
import threading

from candidates.api.views import _no_cyclic_gc


def test_collector_stays_off_until_the_last_overlapping_request_ends():
    first_inside, second_inside, first_done = (threading.Event() for _ in range(3))
    seen = {}

    def first():
        with _no_cyclic_gc():
            first_inside.set()
            second_inside.wait(5)
        first_done.set()

    def second():
        first_inside.wait(5)
        with _no_cyclic_gc():
            second_inside.set()
            first_done.wait(5)
            seen["after the first ended"] = gc.isenabled()
        seen["after both ended"] = gc.isenabled()

    assert gc.isenabled()
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"after the first ended": False, "after both ended": True}


def test_collector_left_off_when_it_was_off_before():
    gc.disable()
    try:
        with _no_cyclic_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
