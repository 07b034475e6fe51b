"""The cyclic collector in a worker (foundation.ops.collector): paused around large
answers under threaded workers; startup objects frozen out of its reach."""
import gc
import threading

from django.urls import get_resolver

from foundation.ops.collector import freeze_startup_objects, paused


def test_collector_stays_off_until_the_last_overlapping_request_ends():
    first_inside, second_inside, first_done = (threading.Event() for _ in range(3))
    seen = {}

    def first():
        with paused():
            first_inside.set()
            second_inside.wait(5)
        first_done.set()

    def second():
        first_inside.wait(5)
        with paused():
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
        with paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_freeze_startup_objects_takes_the_loaded_views_out_of_the_collectors_reach():
    gc.unfreeze()
    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() > 10_000
        from candidates.api.views import AllocationCandidateViewSet

        startup = {id(get_resolver()), id(AllocationCandidateViewSet)}
        assert not [o for o in gc.get_objects() if id(o) in startup]
        made_after = {"built": ["by a request"]}
        assert any(o is made_after for o in gc.get_objects())
    finally:
        gc.unfreeze()
