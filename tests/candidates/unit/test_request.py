"""request.py: pure parsing, no database."""
import pytest

from candidates.exceptions import InvalidCandidatesQuery
from candidates.request import parse_request
from providers.exceptions import InvalidQuery
from foundation.api.microversion import Version

V = Version.parse


def parse(query, version="1.39"):
    lists = {}
    for pair in query.split("&") if query else []:
        key, _, value = pair.partition("=")
        lists.setdefault(key, []).append(value)
    return parse_request(lists, V(version))


def test_unsuffixed_group():
    parsed = parse("resources=VCPU:1,MEMORY_MB:512&required=A,!B&member_of=in:"
                   "a0000000-0000-0000-0000-00000000000a,b0000000-0000-0000-0000-00000000000b")
    [group] = parsed.query.groups
    assert group.suffix == "" and group.resources == (("VCPU", 1), ("MEMORY_MB", 512))
    assert group.required_sets == (frozenset({"A"}),)
    assert group.forbidden == frozenset({"B"})
    assert len(group.aggregates.any_of[0]) == 2


def test_groups_in_order_of_first_suffix():
    parsed = parse("resources_B=VCPU:1&resources_A=VCPU:1&required_B=X&group_policy=none")
    assert [g.suffix for g in parsed.query.groups] == ["_B", "_A"]


def test_resources_last_wins_and_required_last_below_1_39():
    parsed = parse("resources=VCPU:1&resources=VCPU:2&required=A&required=B", "1.38")
    [group] = parsed.query.groups
    assert group.resources == (("VCPU", 2),)
    assert group.required_sets == (frozenset({"B"}),)


def test_required_anded_from_1_39():
    [group] = parse("resources=VCPU:1&required=in:A,B&required=C").query.groups
    assert set(group.required_sets) == {frozenset({"A", "B"}), frozenset({"C"})}


def test_request_wide():
    parsed = parse("resources_1=VCPU:1&resources1=VCPU:1&group_policy=isolate"
                   "&group_policy=none&limit=3&limit=4&root_required=A,!B"
                   "&same_subtree=_1,1&same_subtree=1,1")
    assert parsed.query.isolate and parsed.query.limit == 3
    assert parsed.query.root_required == {"A"} and parsed.query.root_forbidden == {"B"}
    assert parsed.query.same_subtree == (("_1", "1"), ("1",))


def test_double_bang_is_forbidden():
    [group] = parse("resources=VCPU:1&required=!!A").query.groups
    assert group.forbidden == {"A"}


def test_in_tree_normalised():
    [group] = parse("resources=VCPU:1&in_tree=A0000000000000000000000000000001").query.groups
    assert group.in_tree == "a0000000-0000-0000-0000-000000000001"


@pytest.mark.parametrize("version,flags", [
    ("1.10", (False, False, False, False, False, False)),
    ("1.12", (True, False, False, False, False, False)),
    ("1.17", (True, True, False, False, False, False)),
    ("1.27", (True, True, True, False, False, False)),
    ("1.29", (True, True, True, True, False, True)),
    ("1.34", (True, True, True, True, True, True)),
])
def test_view_flags(version, flags):
    parsed = parse("resources=VCPU:1", version)
    view = parsed.view
    assert (view.dict_allocations, view.traits, view.all_classes, view.tree_summaries,
            view.mappings, parsed.query.nested_aware) == flags


@pytest.mark.parametrize("query,version,message,error", [
    ("resources=VCPU:1&required=A,!A", "1.39", "required: (A)", InvalidCandidatesQuery),
    ("resources=VCPU:1&root_required=A&root_required=B", "1.35", "only once",
     InvalidCandidatesQuery),
    ("resources1=VCPU:1&resources2=VCPU:1", "1.25", "group_policy", InvalidCandidatesQuery),
    ("resources=VCPU:1&same_subtree=_A", "1.36", "Real suffixes", InvalidCandidatesQuery),
    # the value grammars are providers' (providers/query_params.py), and so are their errors
    ("resources=VCPU:0", "1.10", "requires amount >= 1", InvalidQuery),
    ("resources=VCPU", "1.10", "Badly formed resources parameter", InvalidQuery),
])
def test_errors(query, version, message, error):
    with pytest.raises(error) as raised:
        parse(query, version)
    assert message in raised.value.message
