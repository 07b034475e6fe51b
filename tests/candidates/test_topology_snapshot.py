"""The topology snapshot (candidates/sql/topology.py): it answers every sql/ function it
stands in for exactly as the database does, the token moves with every committed change
of the topology (inventories included) and with nothing else, and allocation candidates
follow a change at once.

(Every allocation-candidates scenario also runs with the snapshot: scenarios/conftest.py.)
"""
import uuid as uuidlib
from importlib import import_module

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from candidates.sql import (
    Scope, aggregates, capacity, links, summaries, topology, traits, trees)
from candidates.sql.names import ids_by_name
from candidates.sql.rows import InventoryKey, ProviderRow
from providers.models import ResourceProvider, Trait
from tests.conftest import PlacementClient
from tests.factories import allocate, make_consumer, make_provider

SHARING = "MISC_SHARES_VIA_AGGREGATE"
AGG_A, AGG_B = str(uuidlib.uuid4()), str(uuidlib.uuid4())


def _cloud():
    """Two trees created interleaved (ids of their providers alternate), a lone root, and
    a sharing provider in aggregates with both trees and the lone root."""
    cn1 = make_provider("cn1", inventory={"DISK_GB": 100}, traits=["HW_CPU_X86_AVX2"],
                        aggregates=[AGG_A])
    cn2 = make_provider("cn2", inventory={"DISK_GB": 100}, traits=["HW_CPU_X86_SSE2"])
    numa1 = make_provider("numa1", parent=cn1, inventory={"VCPU": 4},
                          traits=["HW_NUMA_ROOT", "CUSTOM_FOO"])
    numa2 = make_provider("numa2", parent=cn2, inventory={"VCPU": 4}, traits=["HW_NUMA_ROOT"],
                          aggregates=[AGG_B])
    make_provider("fpga1", parent=numa1, inventory={"FPGA": 1}, traits=["CUSTOM_FOO"])
    make_provider("fpga2", parent=numa2, inventory={"FPGA": 1})
    make_provider("lone", inventory={"VCPU": 8, "MEMORY_MB": 1024}, aggregates=[AGG_B])
    make_provider("ss", inventory={"DISK_GB": 1000}, traits=[SHARING],
                  aggregates=[AGG_A, AGG_B])


def _database_answer(function, *args, **kwargs):
    """`function` (an sql/ function marked @answered_from_snapshot) run on the database."""
    return function.__wrapped__(*args, **kwargs)


@pytest.mark.django_db
def test_the_snapshot_answers_as_the_database_does(monkeypatch):
    _cloud()
    snapshot = topology.Snapshot.load()
    roots = sorted(trees.root_ids())
    every_id = [row[0] for row in _database_answer(trees.providers, Scope.everything())]
    trait_ids = list(Trait.objects.filter(
        name__in=["HW_CPU_X86_AVX2", "HW_NUMA_ROOT", "CUSTOM_FOO", SHARING, "STORAGE_DISK_SSD"]
    ).values_list("id", flat=True))
    aggregate_ids = list(snapshot.aggregate_ids.values())
    scopes = [Scope.everything(), Scope.roots_between(roots[0], roots[1] + 1),
              Scope.roots_between(roots[1], roots[-1] + 100), Scope.tree(roots[2]),
              Scope.tree(every_id[-1] + 1000), Scope.trees([roots[0], roots[-1]]),
              Scope.trees([]), Scope.providers(every_id[1::2] + [every_id[-1] + 1000]),
              Scope.providers([])]

    def same(name, *args, ordered=True, **kwargs):
        function = {"providers": trees.providers, "provider_traits": traits.provider_traits,
                    "provider_aggregates": aggregates.provider_aggregates,
                    "provider_traits_and_aggregates": links.provider_traits_and_aggregates,
                    "trait_names": summaries.trait_names, "uuids": summaries.uuids,
                    "class_names": summaries.class_names,
                    "sharing_anchor_roots": aggregates.sharing_anchor_roots,
                    "root_ids": trees.root_ids, "ids_by_name": ids_by_name,
                    "tree_index": trees.tree_index,
                    "any_provider_has_parent": trees.any_provider_has_parent}[name]
        expected = _database_answer(function, *args, **kwargs)
        found = getattr(snapshot, name)(*args, **kwargs)
        if not ordered:   # the SQL has no ORDER BY: compare as sets of rows
            expected, found = _unordered(expected), _unordered(found)
        assert found == expected, (name, args, kwargs)

    for scope in scopes:
        same("providers", scope)
        same("trait_names", scope)
        same("trait_names", scope)   # the whole database's: kept from the first call
        rows = _database_answer(trees.providers, scope)
        same("tree_index", scope, rows)
        same("tree_index", scope, rows)
        roots, positions = snapshot.tree_index(scope, rows, positions=False)
        assert roots == _database_answer(trees.tree_index, scope, rows, positions=False)[0]
        same("provider_traits", trait_ids, scope, ordered=False)
        same("provider_aggregates", aggregate_ids, scope, ordered=False)
        same("provider_traits_and_aggregates", trait_ids, aggregate_ids, scope, ordered=False)
        # with names: the third list comes in provider and trait order
        expected = _database_answer(links.provider_traits_and_aggregates, trait_ids[:2],
                                    aggregate_ids, scope, trait_names=True)
        found = snapshot.provider_traits_and_aggregates(trait_ids[:2], aggregate_ids, scope,
                                                        trait_names=True)
        assert _unordered(found[:2]) == _unordered(expected[:2])
        assert found[2] == expected[2]
        same("sharing_anchor_roots", snapshot.trait_holders[snapshot.trait_ids[SHARING]],
             scope, ordered=False)
    same("provider_traits", [], Scope.everything())
    same("uuids", every_id[:3] + [every_id[-1] + 1000])
    # the engine reads provider rows by name, whoever answers
    for answer in (_database_answer(trees.providers, Scope.everything()),
                   snapshot.providers(Scope.everything())):
        assert answer and all(isinstance(row, ProviderRow) for row in answer)
    # inventories: the snapshot's, with the usage read now, as the database groups them
    consumer = make_consumer()
    allocate(consumer, ResourceProvider.objects.get(name="numa1"), VCPU=3)
    allocate(consumer, ResourceProvider.objects.get(name="ss"), DISK_GB=50)
    allocate(make_consumer(), ResourceProvider.objects.get(name="lone"), VCPU=2, MEMORY_MB=8)
    class_ids = [snapshot.class_ids[name] for name in ("VCPU", "DISK_GB", "MEMORY_MB")]
    monkeypatch.setattr(topology, "_current_snapshot", lambda: snapshot)   # in a transaction
    for scope in scopes:
        for rc_ids, exclude in ((None, ()), (class_ids[:2], ()), (None, class_ids[:1]),
                                ([], ())):
            expected = capacity.inventory_groups(scope, rc_ids, exclude)
            with topology.in_use() as used_snapshot:
                assert used_snapshot is not None
                found = capacity.inventory_groups(scope, rc_ids, exclude)
                rows = capacity.inventories(scope, rc_ids, exclude)
                shown = capacity.shown_groups(scope, rc_ids, exclude)
            assert _unordered(capacity.rows_of(found)) == _unordered(
                capacity.rows_of(expected)), (scope.kind, rc_ids, exclude)
            assert _unordered(rows) == _unordered(capacity.rows_of(expected))
            assert _unordered(capacity.rows_of(shown)) == _unordered(rows)
            # ... and inventory group keys by name, read grouped or not
            assert all(isinstance(key, InventoryKey) for key, _ in expected + found + shown)
    same("class_names", list(snapshot.class_name)[:5] + [10 ** 6])
    same("root_ids", ordered=False)
    same("any_provider_has_parent")
    same("ids_by_name", classes={"VCPU", "CUSTOM_NONE"}, traits={"CUSTOM_FOO", "CUSTOM_NO"},
         aggregates={AGG_A, str(uuidlib.uuid4())},
         providers={_provider_uuid("numa2"), str(uuidlib.uuid4())},
         sharing_trait=SHARING, every_class=False, root_bounds=True)
    same("ids_by_name", classes=set(), traits=set(), aggregates=set(), providers=set(),
         sharing_trait=SHARING, every_class=True, root_bounds=True)


def _provider_uuid(name):
    return ResourceProvider.objects.get(name=name).uuid


def _unordered(value):
    if isinstance(value, tuple):
        return tuple(_unordered(part) for part in value)
    return sorted(value)


# --- the token ---------------------------------------------------------------------------
#
# Committed transactions: on PostgreSQL the token moves when the writing transaction
# commits.

def _token():
    with connection.cursor() as cursor:
        cursor.execute(topology.TOKEN_SQL)
        return cursor.fetchone()[0]


@pytest.fixture
def committed_api(transactional_db):
    topology.forget()
    yield PlacementClient()
    topology.forget()


def _provider(api, name):
    response = api.post("/resource_providers", {"name": name})
    assert response.status_code == 200, response.content
    return response.json()


def test_every_change_of_the_topology_moves_the_token(committed_api):
    api = committed_api
    steps = []

    def changes(what, call):
        before = _token()
        response = call()
        assert response.status_code in (200, 201, 204), (what, response.content)
        assert _token() != before, what
        steps.append(what)
        return response

    root = changes("create a root", lambda: api.post("/resource_providers", {"name": "cn"}))
    root = root.json()
    child = changes("create a child", lambda: api.post(
        "/resource_providers", {"name": "numa", "parent_provider_uuid": root["uuid"]})).json()
    changes("create a trait", lambda: api.put("/traits/CUSTOM_GOLD"))
    changes("create a resource class", lambda: api.post("/resource_classes",
                                                        {"name": "CUSTOM_MAGIC"}))
    changes("set traits", lambda: api.put(f"/resource_providers/{child['uuid']}/traits", {
        "traits": ["CUSTOM_GOLD"], "resource_provider_generation": child["generation"]}))
    changes("set aggregates", lambda: api.put(
        f"/resource_providers/{root['uuid']}/aggregates",
        {"aggregates": [AGG_A], "resource_provider_generation": root["generation"]}))
    other = _provider(api, "cn2")
    changes("reparent", lambda: api.put(f"/resource_providers/{child['uuid']}", {
        "name": "numa", "parent_provider_uuid": other["uuid"]}))
    changes("remove traits", lambda: api.delete(f"/resource_providers/{child['uuid']}/traits"))
    changes("set inventories", lambda: api.put(
        f"/resource_providers/{other['uuid']}/inventories",
        {"inventories": {"VCPU": {"total": 8}}, "resource_provider_generation": 0}))
    changes("change an inventory", lambda: api.put(
        f"/resource_providers/{other['uuid']}/inventories/VCPU",
        {"total": 16, "resource_provider_generation": 1}))
    changes("delete an inventory", lambda: api.delete(
        f"/resource_providers/{other['uuid']}/inventories/VCPU"))
    changes("delete a provider", lambda: api.delete(f"/resource_providers/{child['uuid']}"))
    changes("delete a trait", lambda: api.delete("/traits/CUSTOM_GOLD"))
    changes("delete a resource class", lambda: api.delete("/resource_classes/CUSTOM_MAGIC"))
    assert len(steps) == 14


def test_claims_and_names_leave_the_token(committed_api):
    api = committed_api
    cn = _provider(api, "cn")
    response = api.put(f"/resource_providers/{cn['uuid']}/inventories", {
        "inventories": {"VCPU": {"total": 8}}, "resource_provider_generation": 0})
    assert response.status_code == 200
    token = _token()
    consumer = str(uuidlib.uuid4())
    response = api.put(f"/allocations/{consumer}", {
        "allocations": {cn["uuid"]: {"resources": {"VCPU": 2}}},
        "project_id": str(uuidlib.uuid4()), "user_id": str(uuidlib.uuid4()),
        "consumer_generation": None, "consumer_type": "INSTANCE"})
    assert response.status_code == 204, response.content
    response = api.put(f"/resource_providers/{cn['uuid']}", {"name": "renamed"})
    assert response.status_code == 200
    assert _token() == token


def test_a_rolled_back_change_leaves_the_token(committed_api):
    _provider(committed_api, "cn")
    token = _token()
    with pytest.raises(RuntimeError), transaction.atomic():
        Trait.objects.create(name="CUSTOM_NEVER")
        raise RuntimeError("roll back")
    assert _token() == token


@pytest.mark.skipif(connection.vendor != "postgresql", reason="TRUNCATE is PostgreSQL's")
def test_truncate_moves_the_token(committed_api):
    _provider(committed_api, "cn")
    token = _token()
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE resource_provider_aggregates")
    assert _token() != token


# --- candidates over the snapshot --------------------------------------------------------

QUERY = "/allocation_candidates?resources=VCPU:1&required=CUSTOM_GOLD"


# the tables whose changes move the token (migrations providers 0006 and 0007)
TOPOLOGY_TABLES = {
    **import_module("providers.migrations.0006_topology_token").TOPOLOGY_TABLES,
    **import_module("providers.migrations.0007_inventories_move_the_topology_token").TABLES}


def _topology_reads(api, path):
    """The answer to GET path, and how many of its statements read a topology table."""
    with CaptureQueriesContext(connection) as queries:
        response = api.get(path)
    assert response.status_code == 200, response.content
    reads = [query["sql"] for query in queries.captured_queries
             if set(TOPOLOGY_TABLES) & set(query["sql"].replace(",", " ").split())]
    return response.json(), len(reads)


def _host(api):
    """A provider with 8 VCPU (generation 1) and the trait CUSTOM_GOLD created."""
    api.put("/traits/CUSTOM_GOLD")
    cn = _provider(api, "cn")
    response = api.put(f"/resource_providers/{cn['uuid']}/inventories", {
        "inventories": {"VCPU": {"total": 8}}, "resource_provider_generation": 0})
    assert response.status_code == 200
    return cn


def _gild(api, cn):
    response = api.put(f"/resource_providers/{cn['uuid']}/traits", {
        "traits": ["CUSTOM_GOLD"], "resource_provider_generation": 1})
    assert response.status_code == 200


def test_candidates_follow_a_change_of_the_topology_at_once(committed_api, settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    api = committed_api
    cn = _host(api)
    body, _ = _topology_reads(api, QUERY)   # loads the snapshot
    assert body["allocation_requests"] == []
    body, reads = _topology_reads(api, QUERY)
    assert reads == 0   # the snapshot answered
    assert body["allocation_requests"] == []

    _gild(api, cn)
    body, _ = _topology_reads(api, QUERY)
    assert list(body["provider_summaries"]) == [cn["uuid"]]
    assert body["provider_summaries"][cn["uuid"]]["traits"] == ["CUSTOM_GOLD"]

    # a claim is no change of the topology: the snapshot stays, the usage is fresh
    consumer = make_consumer()
    allocate(consumer, ResourceProvider.objects.get(uuid=cn["uuid"]), VCPU=3)
    body, reads = _topology_reads(api, QUERY)
    assert reads == 0
    assert body["provider_summaries"][cn["uuid"]]["resources"]["VCPU"]["used"] == 3

    api.delete(f"/resource_providers/{cn['uuid']}/traits")
    body, _ = _topology_reads(api, QUERY)
    assert body["allocation_requests"] == []


def test_until_the_token_settles_the_database_answers(committed_api, settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 3600
    api = committed_api
    cn = _host(api)
    _gild(api, cn)
    for _ in range(2):
        body, reads = _topology_reads(api, QUERY)
        assert list(body["provider_summaries"]) == [cn["uuid"]]
        assert reads >= 3   # names, providers, links ... read each time


def test_inside_a_transaction_the_database_answers(committed_api, settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    _provider(committed_api, "cn")
    with topology.in_use() as snapshot:
        assert snapshot is not None
    with transaction.atomic():
        # on PostgreSQL this transaction's own changes would not have moved the token yet
        Trait.objects.create(name="CUSTOM_UNCOMMITTED")
        with topology.in_use() as snapshot:
            assert snapshot is None


# --- the settled snapshot, its token read along ------------------------------------------

def _statements(api, path, version=None):
    """The answer to GET path and the SQL of its statements."""
    with CaptureQueriesContext(connection) as queries:
        response = api.get(path, version=version)
    return response, [query["sql"] for query in queries.captured_queries]


def _token_reads(statements):
    """Statements that read the token on their own, and those that read it along."""
    alone = [sql for sql in statements if sql.strip() == topology.TOKEN_SQL]
    along = [sql for sql in statements if "topology_token" in sql and sql not in alone]
    return len(alone), len(along)


def _settled(api, cn):
    """Gild cn and let this process load and settle its snapshot."""
    _gild(api, cn)
    for _ in range(2):
        response, _ = _statements(api, QUERY)
        assert response.status_code == 200


def test_a_settled_process_reads_the_token_with_the_usage(committed_api, settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    api = committed_api
    cn = _host(api)
    _settled(api, cn)
    response, statements = _statements(api, QUERY)
    assert list(response.json()["provider_summaries"]) == [cn["uuid"]]
    # on PostgreSQL along with the usage; SQLite has no round trip to save
    assert _token_reads(statements) == ((0, 1) if connection.vendor == "postgresql"
                                        else (1, 0))
    assert statements[0] != topology.TOKEN_SQL   # not read first, in either case


def test_a_change_made_elsewhere_is_seen_by_the_next_request(committed_api, settings):
    """The snapshot is settled when another process changes the topology: the next
    request finds the token moved, answers again from the database, and the process goes
    the careful way until it holds the new topology."""
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    api = committed_api
    cn = _host(api)
    _settled(api, cn)
    with connection.cursor() as cursor:   # as another process would: no API call here
        cursor.execute("DELETE FROM resource_provider_traits")
    response, statements = _statements(api, QUERY)
    assert response.json()["allocation_requests"] == []
    alone, along = _token_reads(statements)
    # the stale attempt, then the careful answer (which reads the token first)
    if connection.vendor == "postgresql":
        assert along == 1 and alone >= 1
    else:
        assert alone >= 2
    response, statements = _statements(api, QUERY)   # loads the new snapshot
    assert response.json()["allocation_requests"] == []
    response, statements = _statements(api, QUERY)
    assert _token_reads(statements) == ((0, 1) if connection.vendor == "postgresql"
                                        else (1, 0))


def test_a_name_unknown_to_a_stale_snapshot_is_looked_up_again(committed_api, settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    api = committed_api
    cn = _host(api)
    _settled(api, cn)
    assert api.put("/traits/CUSTOM_NEW").status_code == 201
    response = api.put(f"/resource_providers/{cn['uuid']}/traits", {
        "traits": ["CUSTOM_GOLD", "CUSTOM_NEW"], "resource_provider_generation": 2})
    assert response.status_code == 200
    response, _ = _statements(api, "/allocation_candidates?resources=VCPU:1"
                                    "&required=CUSTOM_NEW")
    assert response.status_code == 200, response.content
    assert list(response.json()["provider_summaries"]) == [cn["uuid"]]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite reads it on its own")
def test_the_token_comes_along_when_nothing_is_allocated(committed_api, settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    api = committed_api
    cn = _host(api)
    _settled(api, cn)
    for query in ("resources=DISK_GB:1", "resources=VCPU:1"):   # no inventory; no usage
        response, statements = _statements(api, "/allocation_candidates?" + query,
                                           version="1.26")
        assert response.status_code == 200
        assert _token_reads(statements) == (0, 1)


def test_an_inventory_changed_elsewhere_is_seen_by_the_next_request(committed_api,
                                                                     settings):
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    api = committed_api
    cn = _host(api)
    _settled(api, cn)
    for total, count in ((1, 0), (8, 1)):
        with connection.cursor() as cursor:   # as another process would
            cursor.execute("UPDATE inventories SET total = %s", [total])
        response, _ = _statements(api, "/allocation_candidates?resources=VCPU:2")
        assert len(response.json()["allocation_requests"]) == count
        response, _ = _statements(api, "/allocation_candidates?resources=VCPU:2")
        assert len(response.json()["allocation_requests"]) == count


def test_a_provider_unknown_to_a_stale_snapshot_is_read_again(committed_api, settings):
    """A provider created elsewhere after the snapshot settled is in the inventories the
    request reads before the snapshot knows it: the stale attempt is dropped and the
    answer read again, not a 500, in every group kind's path."""
    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    api = committed_api
    cn = _host(api)
    _settled(api, cn)
    other = _provider(api, "cn2")
    response = api.put(f"/resource_providers/{other['uuid']}/inventories", {
        "inventories": {"VCPU": {"total": 8}}, "resource_provider_generation": 0})
    assert response.status_code == 200
    for query in ("resources=VCPU:1", "resources1=VCPU:1", "resources=VCPU:1&limit=1"):
        response = api.get("/allocation_candidates?" + query)
        assert response.status_code == 200, response.content
        assert len(response.json()["allocation_requests"]) == (1 if "limit" in query else 2)


# --- the operator UI's "why not?" reads the topology as the API does -----------------------

def _why_not(client, q, cloud_wide):
    """The why-not page's cloud-wide answer (or the JSON's page of trees), and how many
    of its statements read the engine's topology: every topology table but the
    providers' own, which the explainer pages and names trees from."""
    from django.urls import reverse

    url = reverse("ui:why-not") if cloud_wide else reverse("ui:why-not-json")
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, {"q": q, "version": "1.39"})
    assert response.status_code == 200, response.content
    engine_tables = set(TOPOLOGY_TABLES) - {"resource_providers"}
    reads = [query["sql"] for query in queries.captured_queries
             if engine_tables & set(query["sql"].replace(",", " ").split())]
    found = response.context["explanation"]["cloud"] if cloud_wide else response.json()
    return found, len(reads)


@pytest.mark.parametrize("cloud_wide", [True, False], ids=["page", "json"])
def test_why_not_answers_from_the_snapshot_and_follows_a_change_at_once(
        committed_api, settings, cloud_wide):
    from django.contrib.auth import get_user_model
    from django.test import Client

    settings.PLACEMENT_TOPOLOGY_SETTLE_SECONDS = 0
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("op", "op@example.invalid"))
    api, q = committed_api, "resources=VCPU:1&required=CUSTOM_GOLD"
    cn = _host(api)
    first, reads = _why_not(client, q, cloud_wide)   # from the database, loading the snapshot
    assert reads >= 3
    again, reads = _why_not(client, q, cloud_wide)
    assert reads == 0 and again == first             # the snapshot, saying the same

    _gild(api, cn)                                   # a change: seen by the next request
    gilded, _ = _why_not(client, q, cloud_wide)
    if cloud_wide:
        assert (first["fitting_trees"], gilded["fitting_trees"]) == (0, 1)
    else:
        assert [t["fits"] for t in first["trees"]] == [False]
        assert [t["fits"] for t in gilded["trees"]] == [True]
