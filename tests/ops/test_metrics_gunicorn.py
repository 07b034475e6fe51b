"""A live gunicorn server with two workers: metrics (multiprocess mode: every value is
summed over the workers whichever worker answers the scrape) and JSON request logs."""
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.http import free_port

ROOT = Path(__file__).resolve().parents[2]
PORTS = range(18710, 18730)  # this test's share of the ops port range
HEADERS = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement latest",
           "Content-Type": "application/json"}


def _free_port():
    try:
        return free_port(PORTS)
    except RuntimeError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("metrics")
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{workdir}/db.sqlite3",
               PLACEMENT_LOG_FORMAT="json", LOG_LEVEL="INFO")
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                   cwd=ROOT, env=env, check=True)
    # gunicorn_conf creates and empties the directory when the server starts
    env["PROMETHEUS_MULTIPROC_DIR"] = str(workdir / "prometheus")
    port = _free_port()
    log = open(workdir / "server.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "placement_site.wsgi:application",
         "--config", "python:placement_site.gunicorn_conf",
         "--bind", f"127.0.0.1:{port}", "--workers", "2", "--log-level", "error"],
        cwd=ROOT, env=env, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _call(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("gunicorn did not start")
            time.sleep(0.2)
        yield port, workdir / "server.log"
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def _call(port, method, path, body=None, headers=HEADERS):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                     method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _samples(port):
    status, body = _call(port, "GET", "/metrics", headers={"X-Auth-Token": "admin"})
    assert status == 200
    return [s for family in text_string_to_metric_families(body.decode())
            for s in family.samples]


def _value(samples, name, **labels):
    return sum(s.value for s in samples
               if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))


def test_known_requests_are_summed_over_both_workers(server):
    port, _ = server
    for _ in range(12):
        assert _call(port, "GET", "/resource_providers")[0] == 200
    for _ in range(4):
        assert _call(port, "GET", f"/resource_providers/{uuid.uuid4()}")[0] == 404
    rp = str(uuid.uuid4())
    assert _call(port, "POST", "/resource_providers", {"name": "cn1", "uuid": rp})[0] == 200
    assert _call(port, "PUT", f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 0, "inventories": {"VCPU": {"total": 2}}})[0] == 200
    allocation = {"allocations": {rp: {"resources": {"VCPU": 2}}},
                  "project_id": str(uuid.uuid4()), "user_id": str(uuid.uuid4()),
                  "consumer_generation": None, "consumer_type": "INSTANCE"}
    assert _call(port, "PUT", f"/allocations/{uuid.uuid4()}", allocation)[0] == 204
    assert _call(port, "PUT", f"/allocations/{uuid.uuid4()}", allocation)[0] == 409
    assert _call(port, "GET", "/allocation_candidates?resources=VCPU:1")[0] == 200

    samples = _samples(port)
    assert _value(samples, "placement_http_requests_total", route="/resource_providers",
                  method="GET", status="200", microversion="1.39") == 12
    assert _value(samples, "placement_http_requests_total",
                  route="/resource_providers/<str:uuid>", method="GET", status="404") == 4
    assert _value(samples, "placement_http_request_duration_seconds_count",
                  route="/resource_providers", method="GET") == 12
    assert _value(samples, "placement_http_request_db_queries_count",
                  route="/resource_providers", method="GET") == 12
    assert _value(samples, "placement_http_conflicts_total",
                  route="/allocations/<str:consumer_uuid>",
                  code="placement.undefined_code") == 1
    assert _value(samples, "placement_allocation_capacity_refusals_total") == 1
    assert _value(samples, "placement_allocation_candidates_duration_seconds_count") == 1
    assert _value(samples, "placement_allocation_candidates_returned_sum") == 0
    # one series per live worker, told apart by pid
    pids = {s.labels["pid"] for s in samples
            if s.name == "placement_worker_start_time_seconds"}
    assert len(pids) == 2
    # a scrape is not a request, and no label value is a raw uuid path
    assert _samples(port) and not any(
        rp in value for s in samples for value in s.labels.values())
    assert _value(_samples(port), "placement_http_requests_total",
                  route="/resource_providers", method="GET", status="200") == 12


def test_health_endpoints_on_the_live_server(server):
    port, _ = server
    assert _call(port, "GET", "/healthz", headers={})[0] == 200
    status, body = _call(port, "GET", "/readyz", headers={})
    assert status == 200 and json.loads(body)["status"] == "ready"


def _log_lines(log_file, **fields):
    deadline = time.monotonic() + 10
    while True:  # the workers' stderr is flushed per record, but let them catch up
        lines = [json.loads(line) for line in log_file.read_text().splitlines()
                 if line.startswith("{")]
        found = [line for line in lines
                 if all(line.get(k) == v for k, v in fields.items())]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_one_json_line_per_request(server):
    port, log = server
    caller_id = f"req-{uuid.uuid4()}"
    rp = str(uuid.uuid4())
    headers = dict(HEADERS, **{"X-OpenStack-Request-ID": caller_id,
                               "X-Auth-Token": "alice:tenant1", "X-Roles": "admin",
                               "OpenStack-API-Version": "placement 1.20"})
    assert _call(port, "GET", f"/resource_providers/{rp}", headers=headers)[0] == 404
    [line] = _log_lines(log, global_request_id=caller_id)
    assert line["logger"] == "placement.request"
    assert line["level"] == "INFO"
    assert line["request_id"].startswith("req-") and line["request_id"] != caller_id
    assert line["user_id"] == "alice" and line["project_id"] == "tenant1"
    assert line["method"] == "GET"
    assert line["route"] == "/resource_providers/<str:uuid>"
    assert line["microversion"] == "1.20"
    assert line["status"] == 404
    assert line["duration_ms"] > 0 and line["db_queries"] >= 1
    assert line["time"].endswith("+00:00")


def test_a_global_request_id_that_is_not_req_uuid_is_not_logged(server):
    port, log = server
    headers = dict(HEADERS, **{"X-OpenStack-Request-ID": "req-not-a-uuid"})
    assert _call(port, "GET", "/traits", headers=headers)[0] == 200
    [line] = _log_lines(log, route="/traits")
    assert line["global_request_id"] is None


def test_over_capacity_writes_are_logged_with_their_uuids(server):
    port, log = server
    rp, consumer = str(uuid.uuid4()), str(uuid.uuid4())
    assert _call(port, "POST", "/resource_providers", {"name": "tiny", "uuid": rp})[0] == 200
    assert _call(port, "PUT", f"/resource_providers/{rp}/inventories", {
        "resource_provider_generation": 0, "inventories": {"MEMORY_MB": {"total": 512}}}
    )[0] == 200
    assert _call(port, "PUT", f"/allocations/{consumer}", {
        "allocations": {rp: {"resources": {"MEMORY_MB": 1024}}},
        "project_id": str(uuid.uuid4()), "user_id": str(uuid.uuid4()),
        "consumer_generation": None, "consumer_type": "INSTANCE"})[0] == 409
    [warning] = _log_lines(log, logger="placement.allocations", level="WARNING",
                           provider_uuid=rp)
    assert warning["consumer_uuid"] == consumer
    assert warning["resource_class"] == "MEMORY_MB"
    assert rp in warning["message"] and consumer in warning["message"]
