"""Metrics in one process (the default registry): values after known requests."""
import logging
import re
import uuid
from pathlib import Path

import pytest
from django.db.models import F
from django.test import Client
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from allocations import services
from allocations.models import Consumer
from foundation import config
from foundation.ops import metrics
from tests.factories import make_consumer, make_provider, allocate


def sample(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


class Delta:
    """Metric values now minus at creation (the registry lives across tests)."""

    def __init__(self, *keys):
        self.keys = keys
        self.before = [sample(name, **labels) for name, labels in keys]

    def __call__(self):
        return [sample(name, **labels) - was
                for (name, labels), was in zip(self.keys, self.before)]


REQUESTS = "placement_http_requests_total"


def test_requests_are_counted_by_route_template_method_status_and_microversion(api):
    known = {"route": "/resource_providers/<str:uuid>", "method": "GET",
             "status": "404", "microversion": "1.39"}
    listed = {"route": "/resource_providers", "method": "GET", "status": "200",
              "microversion": "1.14"}
    delta = Delta((REQUESTS, known), (REQUESTS, listed),
                  ("placement_http_request_duration_seconds_count",
                   {"route": "/resource_providers/<str:uuid>", "method": "GET"}))
    for _ in range(3):
        assert api.get(f"/resource_providers/{uuid.uuid4()}").status_code == 404
    api.get("/resource_providers", version="1.14")
    assert delta() == [3, 1, 3]


def test_unknown_paths_and_methods_have_bounded_labels(api):
    delta = Delta((REQUESTS, {"route": "unmatched", "method": "GET", "status": "404",
                              "microversion": "1.39"}),
                  (REQUESTS, {"route": "/traits", "method": "other", "status": "405",
                              "microversion": "1.39"}))
    api.get(f"/no/such/{uuid.uuid4()}")
    api.request("BREW", "/traits")
    assert delta() == [1, 1]


def test_requests_refused_before_routing_still_get_their_route(make_api):
    delta = Delta((REQUESTS, {"route": "/traits", "method": "GET", "status": "401",
                              "microversion": "none"}))
    make_api(token="").get("/traits")
    assert delta() == [1]


def test_database_queries_per_request_are_observed(api):
    labels = {"route": "/resource_providers", "method": "GET"}
    delta = Delta(("placement_http_request_db_queries_count", labels),
                  ("placement_http_request_db_queries_sum", labels))
    make_provider("one")
    api.get("/resource_providers")
    count, queries = delta()
    assert count == 1
    assert queries >= 1


def test_conflicts_by_code_and_capacity_refusals(api):
    provider = make_provider("small", inventory={"VCPU": 2})
    holder = make_consumer()
    allocate(holder, provider, VCPU=2)
    consumer = str(uuid.uuid4())
    route = "/allocations/<str:consumer_uuid>"
    delta = Delta(("placement_http_conflicts_total",
                   {"route": route, "method": "PUT", "code": "placement.undefined_code"}),
                  ("placement_http_conflicts_total",
                   {"route": route, "method": "PUT", "code": "placement.concurrent_update"}),
                  ("placement_allocation_capacity_refusals_total", {}))
    body = {"allocations": {provider.uuid: {"resources": {"VCPU": 1}}},
            "project_id": str(uuid.uuid4()), "user_id": str(uuid.uuid4()),
            "consumer_generation": None, "consumer_type": "INSTANCE"}
    assert api.put(f"/allocations/{consumer}", body).status_code == 409
    body["consumer_generation"] = 5
    assert api.put(f"/allocations/{consumer}", body).status_code == 409
    assert delta() == [1, 1, 1]


def test_an_internal_retry_is_counted_and_logged_with_its_consumers(
        api, monkeypatch, caplog):
    provider = make_provider("raced", inventory={"VCPU": 8})
    consumer = str(uuid.uuid4())
    body = {"allocations": {provider.uuid: {"resources": {"VCPU": 1}}},
            "project_id": str(uuid.uuid4()), "user_id": str(uuid.uuid4()),
            "consumer_generation": None, "consumer_type": "INSTANCE"}
    assert api.put(f"/allocations/{consumer}", body).status_code == 204

    # One lost generation race: another writer changes the consumer after this write
    # has read it and before its compare-and-swap. A real concurrent writer cannot be
    # scheduled into that gap from a test, so the real prepare step is followed, once,
    # by that writer's UPDATE (rolled back with the lost attempt, as the retry re-reads).
    prepare = services.allocations_prepare
    raced = []

    def prepare_then_lose_the_race(**kwargs):
        plan = prepare(**kwargs)
        if not raced:
            raced.append(Consumer.objects.filter(uuid=consumer).update(
                generation=F("generation") + 1))
        return plan

    monkeypatch.setattr(services, "allocations_prepare", prepare_then_lose_the_race)
    delta = Delta(("placement_allocation_write_retries_total", {}))
    body["consumer_generation"] = 1
    body["allocations"][provider.uuid]["resources"]["VCPU"] = 2
    with caplog.at_level(logging.WARNING, logger="placement.allocations"):
        assert api.put(f"/allocations/{consumer}", body).status_code == 204
    assert raced == [1]
    assert delta() == [1]
    [warning] = [r for r in caplog.records if r.name == "placement.allocations"]
    assert warning.levelno == logging.WARNING
    assert warning.consumer_uuids == [consumer] and warning.attempt == 1
    assert consumer in warning.getMessage()
    assert "generation conflict" in warning.getMessage()
    # the retry wrote the allocation, once
    assert Consumer.objects.get(uuid=consumer).generation == 2
    assert api.get(f"/allocations/{consumer}").json()["allocations"][provider.uuid][
        "resources"] == {"VCPU": 2}


def test_allocation_candidates_work(api):
    for n in range(3):
        make_provider(f"cn{n}", inventory={"VCPU": 4})
    delta = Delta(("placement_allocation_candidates_duration_seconds_count", {}),
                  ("placement_allocation_candidates_returned_sum", {}),
                  ("placement_allocation_candidates_providers_scanned_count", {}),
                  ("placement_allocation_candidates_generations_total", {"limited": "true"}),
                  ("placement_allocation_candidates_generations_total", {"limited": "false"}))
    assert api.get("/allocation_candidates?resources=VCPU:1&limit=1").status_code == 200
    assert api.get("/allocation_candidates?resources=VCPU:1").status_code == 200
    assert delta() == [2, 4, 2, 1, 1]


@pytest.mark.django_db
def test_metrics_endpoint_needs_an_administrators_token_and_speaks_prometheus_text(
        make_api):
    """As every path but the root document in Placement (which has no /metrics)."""
    response = Client().get("/metrics")
    assert response.status_code == 401
    assert response.json()["title"] == "Unauthorized"
    refused = make_api(token="nobody").get("/metrics")
    assert refused.status_code == 403
    assert "Policy does not allow admin_api" in refused.json()["errors"][0]["detail"]
    response = Client().get("/metrics", HTTP_X_AUTH_TOKEN="admin")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    names = {family.name for family in text_string_to_metric_families(response.content.decode())}
    assert {"placement_http_requests", "placement_worker_cpu_seconds",
            "placement_allocation_write_retries"} <= names


@pytest.mark.django_db
def test_metrics_may_be_made_public(settings):
    """[django] public_paths lists it: Prometheus scrapes without a token."""
    settings.PLACEMENT_PUBLIC_PATHS = {"/healthz", "/metrics"}
    client = Client()
    assert client.get("/metrics").status_code == 200
    assert client.get("/openapi.json").status_code == 401  # no longer listed


@pytest.mark.django_db
def test_metrics_path_is_configurable(settings):
    settings.PLACEMENT_METRICS_PATH = "/internal/metrics"
    client = Client()  # builds its middleware chain with the setting in force
    assert client.get("/internal/metrics", HTTP_X_AUTH_TOKEN="admin").status_code == 200
    # now an ordinary (unknown) API path
    assert client.get("/metrics", HTTP_X_AUTH_TOKEN="admin").status_code == 404


def test_multiprocess_mode_follows_the_settings(settings, tmp_path):
    """PROMETHEUS_MULTIPROC_DIR reaches the metrics through config and settings: with a
    directory the scrape sums its value files (none here), else this process's registry."""
    assert settings.PROMETHEUS_MULTIPROC_DIR is None  # the test process: one registry
    assert b"\nplacement_allocation_write_retries_total " in metrics.exposition()
    settings.PROMETHEUS_MULTIPROC_DIR = str(tmp_path)
    assert metrics.multiprocess_mode()
    assert b"placement_allocation_write_retries_total" not in metrics.exposition()


def test_the_multiproc_directory_comes_from_the_environment_through_config():
    assert config.prometheus_multiproc_dir({"PROMETHEUS_MULTIPROC_DIR": "/run/p"}) == "/run/p"
    assert config.prometheus_multiproc_dir({"PROMETHEUS_MULTIPROC_DIR": ""}) is None
    assert config.prometheus_multiproc_dir({}) is None


# Modules that may touch os.environ besides config.py: Django's own entry points
# (DJANGO_SETTINGS_MODULE) and gunicorn_conf, which sets PROMETHEUS_MULTIPROC_DIR for
# prometheus-client.
# The entry points set DJANGO_SETTINGS_MODULE as Django asks; only config reads settings.
ENVIRONMENT_EXCEPTIONS = {"manage.py", "placement_site/wsgi.py", "placement_site/cmd/__init__.py",
                          "placement_site/serve.py", "placement_site/gunicorn_conf.py",
                          "foundation/config.py"}


def test_only_config_reads_the_environment():
    root = Path(__file__).resolve().parents[2]
    readers = sorted(
        str(path.relative_to(root))
        for folder in ("placement_site", "providers", "allocations", "candidates")
        for path in (root / folder).rglob("*.py")
        if re.search(r"\bos\.(environ|getenv|putenv)\b", path.read_text()))
    assert set(readers) | {"manage.py"} <= ENVIRONMENT_EXCEPTIONS, readers
