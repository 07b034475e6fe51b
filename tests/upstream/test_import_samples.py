"""import_placement_db on the two samples Placement 16.0.0 wrote (SQLite, MariaDB dump):
afterwards the API answers exactly what the source rows say."""
from collections import defaultdict
from datetime import timezone
from email.utils import parsedate_to_datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from allocations.upstream.dbapi import to_utc
from providers.models import ChangeRecord
from tests.upstream.conftest import source_rows, sqlite_edit

pytestmark = pytest.mark.django_db


def run_import(url, *args):
    out = StringIO()
    call_command("import_placement_db", url, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def expected(url):
    """What clients must see, built from the source rows with plain SQL."""
    rows = lambda sql: source_rows(url, sql)  # noqa: E731
    providers = {uuid: {"name": name, "generation": gen, "parent_provider_uuid": parent,
                        "root_provider_uuid": root}
                 for uuid, name, gen, parent, root in rows(
                     "SELECT rp.uuid, rp.name, rp.generation, pp.uuid, r.uuid "
                     "FROM resource_providers rp "
                     "LEFT JOIN resource_providers pp ON pp.id = rp.parent_provider_id "
                     "JOIN resource_providers r ON r.id = rp.root_provider_id")}
    inventories = defaultdict(dict)
    for uuid, rc, *fields in rows(
            "SELECT rp.uuid, rc.name, i.total, i.reserved, i.min_unit, i.max_unit, "
            "i.step_size, i.allocation_ratio FROM inventories i "
            "JOIN resource_providers rp ON rp.id = i.resource_provider_id "
            "JOIN resource_classes rc ON rc.id = i.resource_class_id"):
        inventories[uuid][rc] = dict(zip(
            ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio"),
            fields))
    traits = defaultdict(set)
    for uuid, name in rows("SELECT rp.uuid, t.name FROM resource_provider_traits x "
                           "JOIN resource_providers rp ON rp.id = x.resource_provider_id "
                           "JOIN traits t ON t.id = x.trait_id"):
        traits[uuid].add(name)
    aggregates = defaultdict(set)
    for uuid, agg in rows("SELECT rp.uuid, a.uuid FROM resource_provider_aggregates x "
                          "JOIN resource_providers rp ON rp.id = x.resource_provider_id "
                          "JOIN placement_aggregates a ON a.id = x.aggregate_id"):
        aggregates[uuid].add(agg)
    allocations = rows(
        "SELECT rp.uuid, rc.name, a.consumer_id, a.used FROM allocations a "
        "JOIN resource_providers rp ON rp.id = a.resource_provider_id "
        "JOIN resource_classes rc ON rc.id = a.resource_class_id")
    consumers = {uuid: {"project_id": project, "user_id": user, "consumer_generation": gen,
                        "consumer_type": ctype or "unknown"}
                 for uuid, project, user, gen, ctype in rows(
                     "SELECT c.uuid, p.external_id, u.external_id, c.generation, ct.name "
                     "FROM consumers c JOIN projects p ON p.id = c.project_id "
                     "JOIN users u ON u.id = c.user_id "
                     "LEFT JOIN consumer_types ct ON ct.id = c.consumer_type_id")}
    return providers, inventories, traits, aggregates, allocations, consumers


@pytest.fixture
def batch_args():
    """Extra import arguments; tests parametrize it to cross batch boundaries."""
    return ()


# 7 rows per batch: every table of the samples but the smallest spans several batches,
# and a provider's allocations of one class can straddle two (usage is summed across).
BATCHES = pytest.mark.parametrize("batch_args", [(), ("--batch-size", "7")],
                                  ids=["default-batch", "batch-of-7"])


@pytest.fixture
def imported(sample_url, batch_args):
    output = run_import(sample_url, *batch_args)
    assert "Imported" in output
    return sample_url, expected(sample_url)


@BATCHES
def test_providers_and_their_contents(imported, api):
    url, (providers, inventories, traits, aggregates, allocations, _) = imported
    listed = api.get("/resource_providers", version="1.39").json()["resource_providers"]
    assert {p["uuid"]: {k: p[k] for k in ("name", "generation", "parent_provider_uuid",
                                          "root_provider_uuid")} for p in listed} == providers
    usage, by_provider = defaultdict(lambda: defaultdict(int)), defaultdict(dict)
    for rp, rc, consumer, used in allocations:
        usage[rp][rc] += used
        by_provider[rp].setdefault(consumer, {})[rc] = used
    for uuid, provider in providers.items():
        body = api.get(f"/resource_providers/{uuid}/inventories").json()
        assert body["resource_provider_generation"] == provider["generation"]
        assert body["inventories"] == inventories.get(uuid, {})
        assert set(api.get(f"/resource_providers/{uuid}/traits").json()["traits"]) \
            == traits.get(uuid, set())
        assert set(api.get(f"/resource_providers/{uuid}/aggregates").json()["aggregates"]) \
            == aggregates.get(uuid, set())
        usages = api.get(f"/resource_providers/{uuid}/usages").json()["usages"]
        assert usages == {rc: usage[uuid].get(rc, 0) for rc in inventories.get(uuid, {})}
        held = api.get(f"/resource_providers/{uuid}/allocations").json()["allocations"]
        assert {c: a["resources"] for c, a in held.items()} == by_provider.get(uuid, {})


@BATCHES
def test_every_consumer_at_1_39_and_1_12(imported, api):
    url, (providers, _, _, _, allocations, consumers) = imported
    held = defaultdict(lambda: defaultdict(dict))
    for rp, rc, consumer, used in allocations:
        held[consumer][rp][rc] = used
    assert set(held) <= set(consumers)
    for uuid, consumer in consumers.items():
        new = api.get(f"/allocations/{uuid}", version="1.39").json()
        old = api.get(f"/allocations/{uuid}", version="1.12").json()
        want = {rp: {"generation": providers[rp]["generation"], "resources": resources}
                for rp, resources in held[uuid].items()}
        assert new["allocations"] == want and old["allocations"] == want
        if want:
            assert {k: new[k] for k in consumer} == consumer
            assert (old["project_id"], old["user_id"]) == (consumer["project_id"],
                                                           consumer["user_id"])
            assert "consumer_generation" not in old and "consumer_type" not in old


def test_usages_per_project_user_and_consumer_type(imported, api):
    url, (_, _, _, _, allocations, consumers) = imported
    per_project = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    per_user = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    counted = defaultdict(set)
    for _, rc, uuid, used in allocations:
        consumer = consumers[uuid]
        per_project[consumer["project_id"]][consumer["consumer_type"]][rc] += used
        key = (consumer["project_id"], consumer["user_id"])
        per_user[key][consumer["consumer_type"]][rc] += used
        counted[(consumer["project_id"], consumer["consumer_type"])].add(uuid)
        counted[(key, consumer["consumer_type"])].add(uuid)
    assert per_project, "the sample has allocations"
    for project, types in per_project.items():
        body = api.get(f"/usages?project_id={project}", version="1.39").json()["usages"]
        assert body == {ctype: {"consumer_count": len(counted[(project, ctype)]), **classes}
                        for ctype, classes in types.items()}
        flat = api.get(f"/usages?project_id={project}", version="1.9").json()["usages"]
        totals = defaultdict(int)
        for classes in types.values():
            for rc, used in classes.items():
                totals[rc] += used
        assert flat == totals
    for (project, user), types in per_user.items():
        body = api.get(f"/usages?project_id={project}&user_id={user}",
                       version="1.39").json()["usages"]
        assert body == {ctype: {"consumer_count": len(counted[((project, user), ctype)]),
                                **classes} for ctype, classes in types.items()}
        for ctype, classes in types.items():
            one = api.get(f"/usages?project_id={project}&user_id={user}&consumer_type={ctype}",
                          version="1.39").json()["usages"]
            assert one == {ctype: {"consumer_count": len(counted[((project, user), ctype)]),
                                   **classes}}


def assert_last_modified_is_the_source_rows(url, api):
    rows = source_rows(url, "SELECT uuid, created_at, updated_at FROM resource_providers")
    for uuid, created, updated in rows:
        stamp = to_utc(updated if updated is not None else created)
        for version in ("1.15", "1.39"):
            response = api.get(f"/resource_providers/{uuid}", version=version)
            assert response.status_code == 200
            assert parsedate_to_datetime(response["Last-Modified"]) == \
                stamp.replace(microsecond=0, tzinfo=timezone.utc), (uuid, version)
    return rows


def test_last_modified_of_each_provider_is_its_source_timestamp(imported, api):
    """GET /resource_providers/{uuid} (1.15+): Last-Modified is the provider row's
    updated_at (every provider of the samples was updated), to the second."""
    rows = assert_last_modified_is_the_source_rows(imported[0], api)
    assert rows and all(updated is not None for *_, updated in rows)


def test_last_modified_of_a_never_updated_provider_is_its_created_at(sqlite_sample, api):
    sqlite_edit(sqlite_sample, "UPDATE resource_providers SET updated_at = NULL "
                               "WHERE name IN ('cn1', 'cn2-numa0')")
    run_import(sqlite_sample)
    rows = assert_last_modified_is_the_source_rows(sqlite_sample, api)
    assert sum(updated is None for *_, updated in rows) == 2


CANDIDATE_QUERIES = [
    # the ceph pool shares DISK_GB through an aggregate with compute nodes
    ("resources=VCPU:1,DISK_GB:10", {"ceph-pool"}),
    # PCPU lives on NUMA children only
    ("resources=PCPU:1", {"cn1-numa0", "cn1-numa1", "cn2-numa0", "cn2-numa1"}),
    # custom classes on ironic nodes, and a sharing license pool
    ("resources=CUSTOM_BAREMETAL_GOLD:1", set()),
    ("resources=VCPU:1&resources1=CUSTOM_LICENSE_WIN:1&group_policy=none", {"license-pool"}),
]


def test_allocation_candidates(imported, api):
    url, (providers, inventories, _, _, allocations, _) = imported
    names = {uuid: p["name"] for uuid, p in providers.items()}
    usage = defaultdict(lambda: defaultdict(int))
    for rp, rc, _, used in allocations:
        usage[rp][rc] += used
    for query, providers_named in CANDIDATE_QUERIES:
        body = api.get(f"/allocation_candidates?{query}", version="1.39").json()
        requested = {part.split(":")[0] for value in query.split("&")
                     if value.startswith("resources")
                     for part in value.split("=", 1)[1].split(",")}
        chosen = {rp for request in body["allocation_requests"]
                  for rp in request["allocations"]}
        assert body["allocation_requests"], query
        assert providers_named <= {names[rp] for rp in chosen}, query
        for request in body["allocation_requests"]:
            for rp, a in request["allocations"].items():
                assert set(a["resources"]) <= set(inventories[rp]) & requested
        for rp, summary in body["provider_summaries"].items():
            assert summary["root_provider_uuid"] == providers[rp]["root_provider_uuid"]
            for rc, figures in summary["resources"].items():
                assert figures["used"] == usage[rp].get(rc, 0), (query, rp, rc)


def test_dry_run_lists_overcapacity_and_writes_nothing(sample_url, api):
    output = run_import(sample_url, "--dry-run")
    assert "used beyond" in output and "Dry run:" in output
    assert "usage per provider and class" in output
    assert api.get("/resource_providers").json()["resource_providers"] == []


def test_trees_are_consistent_after_import(sqlite_sample):
    run_import(sqlite_sample)
    out = StringIO()
    try:
        call_command("placement_status", stdout=out)
    except SystemExit:
        pass
    assert "every tree is consistent" in out.getvalue()


def test_import_is_one_change_log_entry(sqlite_sample):
    run_import(sqlite_sample, "--dry-run")
    assert not ChangeRecord.objects.filter(kind="database").exists()
    run_import(sqlite_sample)
    (entry,) = ChangeRecord.objects.filter(kind="database")
    assert (entry.entity, entry.action, entry.actor) == (
        "placement", "import", "command:import_placement_db")
    assert entry.after["source"] == "sqlite"
    assert entry.after["rows"]["resource_providers"] > 0
    assert not ChangeRecord.objects.filter(kind="provider").exists()  # not one per row


def test_postgresql_planner_statistics_count_the_imported_rows(sqlite_sample):
    if connection.vendor != "postgresql":
        pytest.skip("planner statistics are PostgreSQL's")
    run_import(sqlite_sample)
    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, reltuples FROM pg_class"
                       " WHERE relname IN ('inventories', 'allocations', 'resource_providers')")
        rows = dict(cursor.fetchall())
    assert len(rows) == 3 and all(n > 0 for n in rows.values()), rows
