"""The opt-in extensions root_member_of and isolate (docs/clients/extensions.md): parsing
(request.py) and the rules (candidate_set.root_filter, combine), without a database."""
import pytest

from candidates import candidate_set, combine
from candidates.candidate_set import Facts, Group, Partial
from candidates.request import parse_request
from foundation.api.microversion import Version
from foundation import domain_errors as errors
from foundation.domain_errors import InvalidInput

BOTH = frozenset({"root_member_of", "isolate"})
AZ1 = "a0000000-0000-0000-0000-0000000000a1"
AZ2 = "a0000000-0000-0000-0000-0000000000a2"
AZ3 = "a0000000-0000-0000-0000-0000000000a3"
TWO_GROUPS = "resources_A=VCPU:1&resources_B=VCPU:1"


def parse(query, version="1.40", extensions=BOTH):
    lists = {}
    for pair in query.split("&") if query else []:
        key, _, value = pair.partition("=")
        lists.setdefault(key, []).append(value)
    return parse_request(lists, Version.parse(version), extensions)


def refused(query, **kw):
    with pytest.raises(InvalidInput) as caught:
        parse(query, **kw)
    return caught.value


# --- off, or below 1.40: unknown parameters ------------------------------------------------


@pytest.mark.parametrize("param", [f"root_member_of={AZ1}", "isolate=_A"])
def test_parameters_are_unknown_when_off(param):
    error = refused(f"{TWO_GROUPS}&group_policy=none&{param}", extensions=frozenset())
    assert str(error).startswith("Invalid query string parameters")


@pytest.mark.parametrize("param", [f"root_member_of={AZ1}", "isolate=_A"])
def test_parameters_are_unknown_below_1_40(param):
    error = refused(f"resources_A=VCPU:1&{param}", version="1.39")
    assert str(error).startswith("Invalid query string parameters")


def test_only_the_extensions_on_are_accepted():
    assert parse(f"resources=VCPU:1&root_member_of={AZ1}",
                 extensions=frozenset({"root_member_of"})).query.root_member_of.any_of
    error = refused(f"{TWO_GROUPS}&isolate=_A,_B", extensions=frozenset({"root_member_of"}))
    assert str(error).startswith("Invalid query string parameters")


# --- root_member_of ------------------------------------------------------------------------


def test_root_member_of_in_lists_forbidden_and_repeated_anded():
    query = parse(f"resources=VCPU:1&root_member_of=in:{AZ1},{AZ2}&root_member_of={AZ3}"
                  f"&root_member_of=!{AZ2}&root_member_of=!in:{AZ3},{AZ1}").query
    assert query.root_member_of.any_of == (frozenset({AZ1, AZ2}), frozenset({AZ3}))
    assert query.root_member_of.forbidden == frozenset({AZ1, AZ2, AZ3})


def test_root_member_of_has_no_suffix():
    assert str(refused(f"resources=VCPU:1&root_member_of1={AZ1}")).startswith(
        "Invalid query string parameters")


def test_root_member_of_bad_value_uses_member_of_errors():
    assert "Expected 'member_of' parameter to contain valid UUID(s)" in str(
        refused("resources=VCPU:1&root_member_of=nope"))
    assert "must be prefixed with the 'in:'" in str(
        refused(f"resources=VCPU:1&root_member_of={AZ1},{AZ2}"))


# --- isolate: parsing ----------------------------------------------------------------------


def test_isolate_lists_suffixes_and_replaces_group_policy():
    query = parse(f"{TWO_GROUPS}&resources_C=VCPU:1&isolate=_A, _B,_A").query
    assert query.isolate == ("_A", "_B")


def test_isolate_repeated_is_the_union():
    query = parse(f"{TWO_GROUPS}&resources_C=VCPU:1&isolate=_B&isolate=_A,_B").query
    assert set(query.isolate) == {"_A", "_B"}


def test_group_policy_isolate_isolates_every_suffixed_group():
    query = parse(f"resources=VCPU:1&{TWO_GROUPS}&group_policy=isolate", version="1.39",
                  extensions=frozenset()).query
    assert query.isolate == ("_A", "_B")
    assert parse(f"{TWO_GROUPS}&group_policy=none").query.isolate == ()


@pytest.mark.parametrize("value", ["", ",_A", "_A,,_B", "_A,"])
def test_isolate_naming_the_unsuffixed_group_is_refused(value):
    error = refused(f"{TWO_GROUPS}&isolate={value}")
    assert error.code == errors.QUERYPARAM_BAD_VALUE
    assert "Empty string (unsuffixed group) can not be specified in `isolate`" in str(error)


def test_isolate_with_group_policy_is_refused():
    for policy in ("none", "isolate"):
        error = refused(f"{TWO_GROUPS}&group_policy={policy}&isolate=_A,_B")
        assert error.code == errors.QUERYPARAM_BAD_VALUE
        assert "`isolate` and `group_policy`" in str(error)


def test_isolate_unknown_suffix_is_refused():
    error = refused(f"{TWO_GROUPS}&isolate=A,_B")
    assert error.code == errors.QUERYPARAM_BAD_VALUE
    assert str(error) == ("Real suffixes should be specified in `isolate`: ['A'] not found "
                          "in ['_A', '_B'].")


def test_isolate_may_name_a_resourceless_group():
    query = parse("resources_A=VCPU:1&required_N=HW_NUMA_ROOT&same_subtree=_A,_N"
                  "&isolate=_A,_N").query
    assert query.isolate == ("_A", "_N")


# --- the rules -------------------------------------------------------------------------------


def tree_facts():
    # root 1 with children 2, 3; root 10 alone
    facts = Facts(holds_root=lambda root: True)
    facts.root = {1: 1, 2: 1, 3: 1, 10: 10}
    facts.position = {1: (1, 1, 6), 2: (1, 2, 3), 3: (1, 4, 5), 10: (2, 1, 2)}
    facts.inventory = {(rp, 100): (0, 8, 0, 1.0, 8) for rp in (2, 3)}
    return facts


def partial(rp):
    return Partial(((rp, ((100, 1),)),), (rp,))


def kept(groups, isolate):
    facts = tree_facts()
    partials = [{1: [partial(2), partial(3)]} for _ in groups]
    return {tuple(rps[0] for _, rps in mappings)
            for _, mappings in combine.candidates(groups, partials, facts, isolate=isolate)}


def test_isolate_keeps_listed_groups_apart_and_lets_others_share():
    groups = [Group(s, amounts=((100, 1),)) for s in ("_A", "_B", "_C")]
    found = kept(groups, isolate=("_A", "_B"))
    assert all(a != b for a, b, _ in found)
    assert (2, 3, 2) in found and (2, 3, 3) in found   # _C shares with _A, then _B
    assert len(found) == 4


def test_isolate_of_one_suffix_isolates_nothing():
    groups = [Group(s, amounts=((100, 1),)) for s in ("_A", "_B")]
    assert kept(groups, isolate=("_A",)) == kept(groups, isolate=())


def test_isolate_problem_names_the_listed_groups():
    groups = [Group(s, amounts=((100, 1),)) for s in ("_A", "_B", "_C")]
    judge = combine.judge_for(groups, tree_facts(), isolate=("_A", "_C"))
    assert judge((partial(2), partial(2), partial(3)))[1] is None   # _B unlisted
    assert judge((partial(2), partial(3), partial(2)))[1] == (combine.ISOLATE, 0, 2, 2)


def test_root_filter_checks_the_anchor_aggregates():
    facts = tree_facts()
    facts.aggregates = {1: {7}, 2: {8}, 10: {8, 9}}
    root_ok = candidate_set.root_filter(frozenset(), frozenset(), facts,
                                        member_of=(frozenset({7, 9}),))
    assert root_ok(1) and root_ok(10)
    root_ok = candidate_set.root_filter(frozenset(), frozenset(), facts,
                                        member_of=(frozenset({7, 9}),),
                                        forbidden_aggregates=frozenset({8}))
    assert root_ok(1) and not root_ok(10)   # 8 on child 2 does not count for root 1
    # an aggregate that does not exist: an empty clause, no root is in it
    assert not candidate_set.root_filter(frozenset(), frozenset(), facts,
                                         member_of=(frozenset(),))(1)
