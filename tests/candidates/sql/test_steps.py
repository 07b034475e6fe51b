"""candidates/engine/steps.py: the steps of allocation-candidates.md §3.6, called one by one
and through evaluate(), on small databases."""
import pytest

from candidates.engine import steps
from candidates.exceptions import InvalidCandidatesQuery
from candidates.request import parse_request
from candidates.resolve import resolve
from foundation.api.microversion import Version
from tests.factories import make_provider

AGG_A = "a0000000-0000-0000-0000-00000000000a"
AGG_B = "b0000000-0000-0000-0000-00000000000b"
MISSING = "f0000000-0000-0000-0000-00000000000f"

pytestmark = pytest.mark.django_db


def evaluation(query_string):
    """An Evaluation of a 1.39 query string ("resources=VCPU:1&required=X")."""
    query = {}
    for pair in query_string.split("&"):
        key, value = pair.split("=", 1)
        query.setdefault(key, []).append(value)
    parsed = parse_request(query, Version(1, 39)).query
    return steps.Evaluation(parsed, resolve(parsed))


def group(evaluation_, suffix=""):
    return next(g for g in evaluation_.query.groups if g.suffix == suffix)


@pytest.fixture
def compute():
    root = make_provider("cn", inventory={"VCPU": 8}, traits=["CUSTOM_ROOT"],
                         aggregates=[AGG_A])
    make_provider("numa", parent=root, inventory={"MEMORY_MB": 1024}, traits=["CUSTOM_NUMA"],
                  aggregates=[AGG_B])
    return root


def test_root_traits_known_raises_for_an_unknown_trait(compute):
    with pytest.raises(InvalidCandidatesQuery, match=r"^No such trait\(s\): CUSTOM_NOPE\.$"):
        steps.root_traits_known(evaluation("resources=VCPU:1&root_required=CUSTOM_NOPE"))
    assert steps.root_traits_known(evaluation("resources=VCPU:1&root_required=CUSTOM_ROOT")) \
        is None


def test_some_root_passes(compute):
    assert steps.some_root_passes(evaluation("resources=VCPU:1&root_required=CUSTOM_ROOT")) \
        is None
    assert steps.some_root_passes(evaluation("resources=VCPU:1&root_required=CUSTOM_NUMA")) \
        == "no root provider satisfies root_required"
    assert steps.some_root_passes(evaluation("resources=VCPU:1&root_required=!CUSTOM_ROOT")) \
        == "no root provider satisfies root_required"


def test_classes_known_reports_the_first_unknown_class(compute):
    ev = evaluation("resources=VCPU:1,NOPE_A:1,NOPE_B:1")
    with pytest.raises(InvalidCandidatesQuery, match="No such resource class NOPE_A.$"):
        steps.classes_known(ev, group(ev))


def test_member_of_steps(compute):
    ev = evaluation(f"resources=VCPU:1&member_of={MISSING}")
    assert steps.aggregates_known(ev, group(ev)) == \
        "member_of: no aggregate of a clause exists"
    assert steps.member_of_satisfiable(ev, group(ev)) == \
        "member_of: no provider is a member of every clause"
    # both aggregates exist, but no provider is in both
    ev = evaluation(f"resources=VCPU:1&member_of={AGG_A}&member_of={AGG_B}")
    assert steps.aggregates_known(ev, group(ev)) is None
    assert steps.member_of_satisfiable(ev, group(ev)) == \
        "member_of: no provider is a member of every clause"
    ev = evaluation(f"resources=VCPU:1&member_of=in:{AGG_A},{MISSING}")
    assert steps.aggregates_known(ev, group(ev)) is None
    assert steps.member_of_satisfiable(ev, group(ev)) is None


def test_traits_known(compute):
    ev = evaluation("resources=VCPU:1&required=CUSTOM_ROOT,!CUSTOM_GONE,!CUSTOM_AWAY")
    with pytest.raises(InvalidCandidatesQuery,
                       match=r"No such trait\(s\): CUSTOM_AWAY, CUSTOM_GONE\.$"):
        steps.traits_known(ev, group(ev))


def test_in_tree_exists(compute):
    ev = evaluation(f"resources1=VCPU:1&in_tree1={MISSING}")
    assert steps.in_tree_exists(ev, group(ev, "1")) == "in_tree1: no such provider"
    ev = evaluation(f"resources1=VCPU:1&in_tree1={compute.uuid}")
    assert steps.in_tree_exists(ev, group(ev, "1")) is None


def test_amounts_fit_within_the_in_tree_tree(compute):
    other = make_provider("big", inventory={"VCPU": 64})
    ev = evaluation("resources=VCPU:32")
    assert steps.amounts_fit(ev, group(ev)) is None
    ev = evaluation(f"resources=VCPU:32&in_tree={compute.uuid}")
    assert steps.amounts_fit(ev, group(ev)) == "resources: no provider fits VCPU:32"
    ev = evaluation(f"resources=VCPU:32&in_tree={other.uuid}")
    assert steps.amounts_fit(ev, group(ev)) is None


def test_has_partials_needs_the_traits_on_the_providers_used(compute):
    # traits of the unsuffixed group are met collectively by the tree's providers
    ev = evaluation("resources=VCPU:1,MEMORY_MB:512&required=CUSTOM_ROOT,CUSTOM_NUMA")
    assert steps.has_partials(ev, group(ev)) is None
    # a suffixed group is one provider: no provider has both
    ev = evaluation("resources1=VCPU:1&required1=CUSTOM_ROOT,CUSTOM_NUMA")
    assert steps.has_partials(ev, group(ev, "1")) == \
        "resources1: no provider or set of providers satisfies the group"


def test_evaluate_runs_costly_steps_only_when_a_name_is_unknown(compute):
    query_string = "resources1=VCPU:99&resources2=MEMORY_MB:1&group_policy=none"
    parsed = evaluation(query_string).query
    # every name exists: generation will find the answer empty, no step needs to
    _, reason = steps.evaluate(parsed, resolve(parsed))
    assert reason is None
    _, reason = steps.evaluate(parsed, resolve(parsed), thorough=True)
    assert reason == "resources1: no provider fits VCPU:99"


def test_evaluate_stops_at_the_first_step_that_excludes_everything(compute):
    # group 1 is impossible, so the unknown class of group 2 is never reached (Quirk Q4)
    parsed = evaluation("resources1=VCPU:99&resources2=NOPE:1&group_policy=none").query
    _, reason = steps.evaluate(parsed, resolve(parsed))
    assert reason == "resources1: no provider fits VCPU:99"
    parsed = evaluation("resources2=NOPE:1&resources1=VCPU:99&group_policy=none").query
    with pytest.raises(InvalidCandidatesQuery, match="No such resource class NOPE.$"):
        steps.evaluate(parsed, resolve(parsed))


def test_evaluate_compiles_every_group_once(compute):
    parsed = evaluation(
        f"resources=VCPU:2&required=CUSTOM_ROOT&member_of={AGG_A}&root_required=CUSTOM_ROOT"
    ).query
    ev, reason = steps.evaluate(parsed, resolve(parsed), thorough=True)
    assert reason is None
    (compiled,) = ev.groups()
    assert compiled is ev.compiled(parsed.groups[0])
    names = ev.names
    assert compiled.amounts == ((names.classes["VCPU"], 2),)
    assert compiled.required == (frozenset({names.traits["CUSTOM_ROOT"]}),)
    assert compiled.member_of == (frozenset({names.aggregates[AGG_A]}),)
    assert ev.root_required == frozenset({names.traits["CUSTOM_ROOT"]})
