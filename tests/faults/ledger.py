"""Claim writers, candidate readers and the ledger of what they were told (harness.py)."""
import http.client
import random
import threading
import time
import uuid
from collections import Counter

from tests.faults.harness import (CAPACITY, INTERNALS, _exchange, detail,
                                  unknown_outcome)

PROJECT, USER = str(uuid.uuid4()), str(uuid.uuid4())


class Load:
    """`writers` claim/delete loops and `readers` candidate loops against `server`."""

    def __init__(self, server, providers, writers=8, readers=2, allowed=(503,),
                 cut_off=False):
        self.server, self.providers = server, providers
        self.allowed = set(allowed)    # error statuses beyond 4xx a fault may give
        # a worker killed while sending its answer: nothing can finish it, the client
        # sees the connection drop mid-body (and nothing else may drop one)
        self.cut_off = cut_off
        self.answers = Counter()       # (method, status) -> count
        self.unclean = []              # errors that were not a clean JSON answer
        self.beliefs = {}              # consumer -> True (has a claim) / False
        self.told_timed_out = []       # consumers whose write was answered 504
        self.read_backs = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._writer, daemon=True)
                         for _ in range(writers)]
        self._threads += [threading.Thread(target=self._reader, daemon=True)
                          for _ in range(readers)]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for thread in self._threads:
            thread.join(180)

    def run_for(self, seconds):
        time.sleep(seconds)

    # --- one client's connection, kept alive as keystoneauth does ---------------------

    def _call(self, state, method, path, body=None):
        if state.get("conn") is None:
            state["conn"] = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                                       timeout=120)
        status, headers, document = _exchange(state["conn"], method, path, body)
        if status is None or headers.get("Connection", "").lower() == "close":
            state["conn"].close()
            state["conn"] = None
        self._record(method, status, headers, document)
        return status, document

    def _record(self, method, status, headers, document):
        with self._lock:
            self.answers[method, status] += 1
            if status is not None and status < 400:
                return
            if (status is None and self.cut_off
                    and str(document).startswith("IncompleteRead")):
                return
            text = detail(document)
            clean = (status is not None
                     and (400 <= status < 500 or status in self.allowed)
                     and isinstance(document, dict)
                     and document["errors"][0]["status"] == status
                     and not any(word in text for word in INTERNALS)
                     and (status != 503 or "Retry-After" in headers))
            if not clean:
                self.unclean.append((method, status, str(document)[:300]))

    # --- the loops --------------------------------------------------------------------

    def _writer(self):
        state = {}
        while not self._stop.is_set():
            consumer = str(uuid.uuid4())
            provider = random.choice(self.providers)
            body = {"allocations": {provider: {"resources": {"VCPU": random.randint(1, 4)}}},
                    "project_id": PROJECT, "user_id": USER, "consumer_generation": None}
            status, document = self._call(state, "PUT", f"/allocations/{consumer}", body)
            if status == 503 and not unknown_outcome(status, document):
                time.sleep(0.2)   # Retry-After, shortened
            has = self._believe(state, consumer, status, document, status == 204)
            if status == 504:
                self.told_timed_out.append(consumer)
            if has:
                status, document = self._call(state, "DELETE", f"/allocations/{consumer}")
                self._believe(state, consumer, status, document, status != 204)

    def _believe(self, state, consumer, status, document, has):
        if unknown_outcome(status, document):
            has = self._read_back(state, consumer)
        self.beliefs[consumer] = has
        return has

    def _read_back(self, state, consumer):
        """What nova does after an answer that does not say: read the consumer back."""
        with self._lock:
            self.read_backs += 1
        while True:
            status, document = self._call(state, "GET", f"/allocations/{consumer}")
            if status == 200:
                return bool(document["allocations"])
            time.sleep(0.5)

    def _reader(self):
        state = {}
        while not self._stop.is_set():
            self._call(state, "GET", "/allocation_candidates?resources=VCPU:1&limit=5")


def make_providers(server, count=2):
    providers = []
    for number in range(count):
        rp = str(uuid.uuid4())
        status, _, _ = server.call("POST", "/resource_providers",
                                   {"name": f"host-{number}", "uuid": rp})
        assert status in (200, 201)
        status, _, _ = server.call("PUT", f"/resource_providers/{rp}/inventories", {
            "resource_provider_generation": 0,
            "inventories": {"VCPU": {"total": CAPACITY, "allocation_ratio": 1.0}}})
        assert status == 200
        providers.append(rp)
    return providers


def check(load, database, name):
    """The ledger against the database: no over-capacity, no phantom, no lost claim,
    every error clean. Returns a summary for the test's report."""
    over = database.query("""
        SELECT rp.uuid, sum(a.used), i.total
        FROM allocations a JOIN resource_providers rp ON rp.id = a.provider_id
        JOIN inventories i ON i.provider_id = a.provider_id
             AND i.resource_class_id = a.resource_class_id
        GROUP BY rp.uuid, i.total, i.reserved, i.allocation_ratio
        HAVING sum(a.used) > (i.total - i.reserved) * i.allocation_ratio""",
                          database=name)
    saved = {row[0] for row in database.query(
        "SELECT DISTINCT c.uuid FROM consumers c JOIN allocations a ON a.consumer_id = c.id",
        database=name)}
    phantoms = [c for c, has in load.beliefs.items() if not has and c in saved]
    lost = [c for c, has in load.beliefs.items() if has and c not in saved]
    assert not over, f"over capacity: {over}"
    assert not phantoms, f"claims saved that their clients were told failed: {phantoms}"
    assert not lost, f"claims their clients were told succeeded, missing: {lost}"
    assert not load.unclean, f"errors that were not clean JSON 4xx/503: {load.unclean[:5]}"
    assert load.answers["PUT", 204] > 0, f"no claim succeeded: {dict(load.answers)}"
    return {"answers": {f"{m} {s}": n for (m, s), n in sorted(load.answers.items(),
                                                                  key=str)},
            "read_backs": load.read_backs, "consumers": len(load.beliefs)}


def report(name, summary, **figures):
    """One line per test in the output (pytest -s, or the CI log on failure)."""
    print(f"\nFAULT {name}: {summary} {figures}")
