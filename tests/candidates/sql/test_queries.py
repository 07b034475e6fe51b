"""candidates/sql: one small tree per question."""
from itertools import islice

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from candidates.engine import batches as engine_batches
from candidates.sql import Scope, aggregates, capacity, links, names, summaries, traits, trees
from providers.models import ResourceClass, Trait
from tests.factories import allocate, make_consumer, make_provider

AGG = "a0000000-0000-0000-0000-00000000000a"


def rc(name):
    return ResourceClass.objects.get(name=name).id


def fitting(amounts, scope=None):
    fits = capacity.providers_with_capacity(amounts, scope or Scope.everything())
    return sorted((rp, rc, n) for (rc, n), rps in fits.items() for rp in rps)


@pytest.mark.django_db
def test_capacity_units_usage_and_ratio():
    a = make_provider("a", inventory={"VCPU": {"total": 8, "reserved": 2, "min_unit": 2,
                                               "max_unit": 4, "step_size": 2}})
    b = make_provider("b", inventory={"VCPU": {"total": 2, "allocation_ratio": 2.0}})
    allocate(make_consumer(), b, VCPU=3)
    vcpu = rc("VCPU")
    assert fitting([(vcpu, 1)]) == [(b.id, vcpu, 1)]            # a: below min_unit
    assert fitting([(vcpu, 2)]) == [(a.id, vcpu, 2)]            # b: 3 used + 2 > 4
    assert fitting([(vcpu, 3)]) == []                           # a: step 2; b: full
    assert fitting([(vcpu, 4)]) == [(a.id, vcpu, 4)]
    assert fitting([(vcpu, 6)]) == []                           # a: above max_unit
    assert fitting([(vcpu, 1), (vcpu, 2)]) == [(a.id, vcpu, 2), (b.id, vcpu, 1)]


@pytest.mark.django_db
def test_scopes():
    r1 = make_provider("r1", inventory={"VCPU": 1})
    c1 = make_provider("c1", parent=r1, inventory={"VCPU": 1})
    r2 = make_provider("r2", inventory={"VCPU": 1})
    vcpu = rc("VCPU")
    assert [row[0] for row in fitting([(vcpu, 1)], Scope.tree(r1.id))] == [r1.id, c1.id]
    assert [row[0] for row in fitting([(vcpu, 1)], Scope.roots_between(r2.id, r2.id + 1))] == [
        r2.id]
    assert [row[0] for row in fitting([(vcpu, 1)], Scope.providers([c1.id]))] == [c1.id]
    assert [row[0] for row in fitting([(vcpu, 1)])] == [r1.id, c1.id, r2.id]
    assert fitting([(vcpu, 1)], Scope.providers([])) == []


def _sorted_groups(groups):
    return sorted((key, sorted(rps)) for key, rps in groups)


@pytest.mark.django_db
def test_wide_scopes_sum_usage_in_one_grouped_pass(monkeypatch):
    r1 = make_provider("r1", inventory={"VCPU": 8, "MEMORY_MB": 1024})
    c1 = make_provider("c1", parent=r1, inventory={"VCPU": 4})
    r2 = make_provider("r2", inventory={"VCPU": 8})
    r3 = make_provider("r3", inventory={"VCPU": 8})
    allocate(make_consumer(), r1, VCPU=3, MEMORY_MB=512)
    allocate(make_consumer(), c1, VCPU=1)
    allocate(make_consumer(), r2, VCPU=2)
    allocate(make_consumer(), r2, VCPU=2)
    allocate(make_consumer(), r3, VCPU=5)   # outside the scopes below
    scopes = [Scope.roots_between(r1.id, r3.id), Scope.trees([r1.id, r2.id])]
    narrow = [_sorted_groups(capacity.inventory_groups(scope)) for scope in scopes]
    vcpu, memory = rc("VCPU"), rc("MEMORY_MB")
    assert [(key[:2], rps) for key, rps in narrow[0]] == sorted([
        ((vcpu, 3), [r1.id]), ((vcpu, 1), [c1.id]), ((vcpu, 4), [r2.id]),
        ((memory, 512), [r1.id])])
    monkeypatch.setattr(capacity, "CORRELATED_USAGE_UP_TO", 1)
    with CaptureQueriesContext(connection) as captured:
        wide = [_sorted_groups(capacity.inventory_groups(scope)) for scope in scopes]
    assert wide == narrow
    assert all("GROUP BY a.provider_id" in q["sql"] for q in captured)
    with CaptureQueriesContext(connection) as captured:
        capacity.inventory_groups(Scope.providers([r1.id, c1.id, r2.id]))
    assert "GROUP BY a.provider_id" not in captured[0]["sql"]   # ids: always correlated


@pytest.mark.django_db
def test_traits_and_aggregates_in_scope():
    r1 = make_provider("r1", traits=["CUSTOM_A"], aggregates=[AGG])
    make_provider("c1", parent=r1, traits=["CUSTOM_A", "CUSTOM_B"])
    r2 = make_provider("r2", traits=["CUSTOM_A"])
    t = dict(Trait.objects.filter(name__startswith="CUSTOM_").values_list("name", "id"))
    rows = traits.provider_traits([t["CUSTOM_A"]], Scope.tree(r1.id))
    assert sorted(row[0] for row in rows) == sorted([r1.id, r1.id + 1])
    assert [row[0] for row in traits.provider_traits([t["CUSTOM_B"]], Scope.everything())] == [
        r1.id + 1]
    rows = aggregates.provider_aggregates(
        [r1.aggregates.get().id], Scope.roots_between(r2.id, r2.id + 100))
    assert rows == []


@pytest.mark.django_db
def test_traits_and_aggregates_in_one_query():
    r1 = make_provider("r1", traits=["CUSTOM_A"], aggregates=[AGG])
    c1 = make_provider("c1", parent=r1, traits=["CUSTOM_A", "CUSTOM_B"])
    r2 = make_provider("r2", traits=["CUSTOM_B"], aggregates=[AGG])
    t = dict(Trait.objects.filter(name__startswith="CUSTOM_").values_list("name", "id"))
    agg = r1.aggregates.get().id
    for scope in (Scope.everything(), Scope.tree(r1.id), Scope.providers([c1.id, r2.id])):
        with CaptureQueriesContext(connection) as queries:
            found = links.provider_traits_and_aggregates([t["CUSTOM_A"], t["CUSTOM_B"]],
                                                         [agg], scope)
        assert len(queries) == 1
        expected = (traits.provider_traits([t["CUSTOM_A"], t["CUSTOM_B"]], scope),
                    aggregates.provider_aggregates([agg], scope))
        assert [sorted(rows) for rows in found] == [sorted(rows) for rows in expected]
    assert sorted(links.provider_traits_and_aggregates([t["CUSTOM_B"]], [], Scope.everything())[0]
                  ) == [(c1.id, t["CUSTOM_B"]), (r2.id, t["CUSTOM_B"])]
    with CaptureQueriesContext(connection) as queries:
        assert links.provider_traits_and_aggregates([], [], Scope.everything()) == ([], [])
    assert len(queries) == 0


@pytest.mark.django_db
def test_links_with_every_trait_name_of_the_scope():
    r1 = make_provider("r1", traits=["CUSTOM_B", "CUSTOM_A"], aggregates=[AGG])
    c1 = make_provider("c1", parent=r1, traits=["CUSTOM_C", "CUSTOM_A"])
    r2 = make_provider("r2", traits=["CUSTOM_B"])
    t = dict(Trait.objects.filter(name__startswith="CUSTOM_").values_list("name", "id"))
    agg = r1.aggregates.get().id
    for scope in (Scope.providers([r1.id, c1.id]), Scope.everything()):
        for wanted_traits, wanted_aggregates in (([t["CUSTOM_A"]], [agg]), ([], []),
                                                 ([t["CUSTOM_C"]], [])):
            with CaptureQueriesContext(connection) as queries:
                trait_rows, aggregate_rows, names = links.provider_traits_and_aggregates(
                    wanted_traits, wanted_aggregates, scope, trait_names=True)
            assert len(queries) == 1
            assert sorted(trait_rows) == sorted(traits.provider_traits(wanted_traits, scope))
            assert sorted(aggregate_rows) == sorted(
                aggregates.provider_aggregates(wanted_aggregates, scope))
            assert names == summaries.trait_names(scope)   # same rows, same order
    names = links.provider_traits_and_aggregates([], [], Scope.providers([r2.id]),
                                                 trait_names=True)[2]
    assert names == [(r2.id, "CUSTOM_B")]


@pytest.mark.django_db
def test_sharing_anchor_roots_reach_whole_trees():
    ss = make_provider("ss", traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[AGG])
    r1 = make_provider("r1")
    make_provider("c1", parent=r1, aggregates=[AGG])   # aggregate on a child only
    make_provider("r2")
    assert sorted(root for _, root in aggregates.sharing_anchor_roots(
        [ss.id], Scope.everything())) == sorted([ss.id, r1.id])
    assert aggregates.sharing_anchor_roots([ss.id], Scope.tree(r1.id)) == [(ss.id, r1.id)]


@pytest.mark.django_db
def test_trees_and_summaries():
    assert names.ids_by_name(root_bounds=True)["root_bounds"] == (None, None)
    r1 = make_provider("r1", inventory={"VCPU": 4, "DISK_GB": 10}, traits=["CUSTOM_A"])
    assert not trees.any_provider_has_parent()
    c1 = make_provider("c1", parent=r1, inventory={"VCPU": 2})
    assert trees.any_provider_has_parent()
    assert names.ids_by_name(root_bounds=True)["root_bounds"] == (r1.id, r1.id)
    allocate(make_consumer(), c1, VCPU=1)
    r2 = make_provider("r2", inventory={"VCPU": 1})
    found = names.ids_by_name(traits={"CUSTOM_A"}, root_bounds=True)
    assert found["root_bounds"] == (r1.id, r2.id)   # c1 is no root
    assert found["root_count"] == 2
    assert found["traits"] == {"CUSTOM_A": Trait.objects.get(name="CUSTOM_A").id}
    vcpu, disk = rc("VCPU"), rc("DISK_GB")

    def inventories(scope, **kw):
        return sorted((row[0], row[1], row[2]) for row in capacity.inventories(scope, **kw))

    assert inventories(Scope.trees([r1.id])) == sorted(
        [(r1.id, disk, 0), (r1.id, vcpu, 0), (c1.id, vcpu, 1)])
    assert capacity.inventories(Scope.providers([c1.id])) == [
        (c1.id, vcpu, 1, 2, 0, 1.0, 1, 2147483647, 1)]
    assert inventories(Scope.everything(), rc_ids=[vcpu]) == sorted(
        [(r1.id, vcpu, 0), (c1.id, vcpu, 1), (r2.id, vcpu, 0)])
    assert inventories(Scope.everything(), exclude_rc_ids=[vcpu]) == [(r1.id, disk, 0)]
    assert inventories(Scope.trees([r1.id]), rc_ids=[disk]) == [(r1.id, disk, 0)]
    assert inventories(Scope.trees([r1.id, r2.id]), exclude_rc_ids=[disk]) == sorted(
        [(r1.id, vcpu, 0), (c1.id, vcpu, 1), (r2.id, vcpu, 0)])
    assert capacity.inventories(Scope.providers([c1.id]), rc_ids=[]) == []
    assert summaries.trait_names(Scope.trees([r1.id])) == [(r1.id, "CUSTOM_A")]
    assert summaries.trait_names(Scope.providers([c1.id])) == []
    assert summaries.uuids([c1.id]) == {c1.id: c1.uuid}
    assert summaries.class_names([vcpu]) == {vcpu: "VCPU"}
    assert [row[:4] for row in trees.providers(Scope.trees([r1.id]))] == [
        (r1.id, r1.uuid, None, r1.id), (c1.id, c1.uuid, r1.id, r1.id)]
    assert [row[0] for row in trees.providers(Scope.everything())] == [r1.id, c1.id, r2.id]
    assert [row[0] for row in trees.providers(Scope.providers([r2.id]))] == [r2.id]
    assert trees.providers(Scope.providers([])) == []
    with_positions = trees.providers(Scope.trees([r1.id]))
    assert [row[4:] for row in with_positions] == [
        (r1.tree_id, r1.lft, r1.rght), (c1.tree_id, c1.lft, c1.rght)]
    assert trees.providers(Scope.trees([r1.id]), positions=False) == [
        row[:4] + (None, None, None) for row in with_positions]


def _count_queries(api, query):
    with CaptureQueriesContext(connection) as captured:
        response = api.get("/allocation_candidates?" + query)
    assert response.status_code == 200
    return len(captured), len(response.json()["allocation_requests"])


FLAT = f"resources=VCPU:1,DISK_GB:10&member_of={AGG}&required=HW_CPU_X86_AVX2"
NESTED = ("resources=DISK_GB:10&resources_C=VCPU:1&required_C=CUSTOM_FOO&resources_F=FPGA:1"
          "&group_policy=none&same_subtree=_C,_F")


def _flat(first, count):
    for i in range(first, first + count):
        make_provider(f"cn{i}", inventory={"VCPU": 8, "DISK_GB": 100}, aggregates=[AGG],
                      traits=["HW_CPU_X86_AVX2"])


def _nested(first, count):
    for i in range(first, first + count):
        cn = make_provider(f"cn{i}", inventory={"DISK_GB": 100})
        numa = make_provider(f"numa{i}", parent=cn, inventory={"VCPU": 4},
                             traits=["CUSTOM_FOO"])
        make_provider(f"fpga{i}", parent=numa, inventory={"FPGA": 1})


@pytest.mark.parametrize("build,query", [(_flat, FLAT), (_nested, NESTED)])
def test_query_count_does_not_grow_with_providers(api, db, build, query):
    build(0, 3)
    small = _count_queries(api, query)
    build(3, 30)
    large = _count_queries(api, query)
    assert small[1] == 3 and large[1] == 33
    assert large[0] == small[0]


def test_limit_looks_at_the_first_anchors_only(api, db):
    _flat(0, 150)
    with CaptureQueriesContext(connection) as captured:
        body = api.get("/allocation_candidates?" + FLAT + "&limit=2").json()
    assert len(body["allocation_requests"]) == 2
    assert len(body["provider_summaries"]) == 2
    # every capacity query was bounded (a root-id range, or the ids of the kept
    # providers), never the whole table
    capacity_sql = [q["sql"] for q in captured if "FROM inventories i" in q["sql"]
                    and "allocation_ratio" in q["sql"]]
    assert capacity_sql
    assert all("root_id >=" in sql or "i.provider_id = ANY(" in sql
               or "i.provider_id IN (SELECT value FROM json_each" in sql for sql in capacity_sql)


@pytest.fixture
def first_batch_64(monkeypatch):
    """The batch tests below walk from a first batch of 64 root ids."""
    monkeypatch.setattr(engine_batches, "FIRST_BATCH_ROOT_IDS", 64)


@pytest.mark.usefixtures("first_batch_64")
def test_batches_name_providers_by_id_when_a_small_share():
    batches = list(engine_batches.batch_scopes(2, None, (1, 10000)))
    # 64, 128, ... root ids: by id while at most a tenth of the 10,000
    assert [(s.lo, s.hi, by_id) for s, by_id in batches[:5]] == [
        (1, 65, True), (65, 193, True), (193, 449, True), (449, 961, True),
        (961, 1985, False)]
    assert [(s.kind, by_id) for s, by_id in engine_batches.batch_scopes(2, None, (1, 50))] \
        == [("all", False)]
    assert list(engine_batches.batch_scopes(2, None, (None, None))) == []


@pytest.mark.usefixtures("first_batch_64")
def test_first_batch_spans_as_many_trees_as_wanted_however_sparse_the_roots():
    # 1,000 roots among ids 1..7,000 (trees of 7 written side by side): a cap of 100
    # spans 700 ids (100 trees), a cap of 2 still the 64 ids of the first batch, and a
    # cap of 1,000 reaches past the last root (one batch of all)
    batches = list(engine_batches.batch_scopes(100, None, (1, 7000), root_count=1000))
    assert [(s.lo, s.hi) for s, _ in batches[:2]] == [(1, 701), (701, 2101)]
    batches = list(engine_batches.batch_scopes(2, None, (1, 7000), root_count=1000))
    assert [(s.lo, s.hi) for s, _ in batches[:2]] == [(1, 65), (65, 193)]
    assert [s.kind for s, _ in engine_batches.batch_scopes(
        1000, None, (1, 7000), root_count=1000)] == ["all"]


@pytest.mark.parametrize("rooms,batches", [
    ({65: 500, 628: None}, [(1, 65), (500, 628)]),   # past trees with no room
    ({65: 65, 193: None}, [(1, 65), (65, 193)]),     # none skipped
    ({65: None}, [(1, 65)]),                         # no tree with room left
])
@pytest.mark.usefixtures("first_batch_64")
def test_batches_start_past_trees_without_room(rooms, batches):
    asked = []

    def first_root_with_room(start):
        asked.append(start)
        return rooms[start]

    walked = list(engine_batches.batch_scopes(2, None, (1, 10000), first_root_with_room))
    assert [(s.lo, s.hi) for s, _ in walked] == batches
    assert asked == list(rooms)


@pytest.mark.parametrize("yields,batches", [
    # no candidate yet: no estimate, the batches double
    ([0, 0], [(1, 101, True), (101, 301, True), (301, 701, True)]),
    # 10 of 100 wanted from 100 root ids: the next reaches 1.25 x 900 root ids further
    ([10, 40], [(1, 101, True), (101, 1226, False), (1226, 3522, False)]),
    # 1 from 100: the cap lies past half of what is left; the rest in one batch
    ([1], [(1, 101, True), (101, 10001, False)]),
])
@pytest.mark.usefixtures("first_batch_64")
def test_batches_follow_the_yield_so_far(yields, batches):
    found = iter(yields)
    walked = islice(engine_batches.batch_scopes(100, None, (1, 10000), None,
                                                lambda: next(found)), 3)
    assert [(s.lo, s.hi, by_id) for s, by_id in walked] == batches
