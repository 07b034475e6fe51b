"""/healthz and /readyz: no token, no microversion, cheap."""
import pytest
from django.test import Client

from placement_site.ops import health
from providers.models import Trait


@pytest.fixture
def anonymous():
    return Client()  # no X-Auth-Token, no OpenStack-API-Version


def test_liveness_needs_no_token_and_no_database(anonymous):
    # no django_db mark: any database access would raise
    response = anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_readiness_checks_database_migrations_and_standard_names(anonymous):
    response = anonymous.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {
        "database": "ok", "migrations": "ok", "standard_names": "ok"}}


@pytest.mark.django_db
def test_readiness_runs_a_few_index_lookups_only(anonymous, django_assert_max_num_queries):
    anonymous.get("/readyz")  # the migration plan is remembered once it is empty
    with django_assert_max_num_queries(3):
        assert anonymous.get("/readyz").status_code == 200


@pytest.mark.django_db
def test_not_ready_without_the_standard_names(anonymous):
    Trait.objects.filter(name=health.NEWEST_STANDARD_TRAIT).delete()
    response = anonymous.get("/readyz")
    assert response.status_code == 503
    assert response.json()["status"] == "not ready"
    assert response.json()["checks"]["standard_names"] == "failed"


@pytest.mark.django_db
def test_not_ready_when_a_migration_is_not_applied(anonymous, monkeypatch):
    from django.db.migrations.recorder import MigrationRecorder

    monkeypatch.setattr(health, "_migrations_applied", False)
    last = MigrationRecorder.Migration.objects.filter(app="providers").order_by("-id").first()
    last.delete()
    response = anonymous.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "ok", "migrations": "failed"}
