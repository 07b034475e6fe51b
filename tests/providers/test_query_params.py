"""providers.query_params: the shared query grammars (no database)."""
import pytest

from providers.exceptions import InvalidQuery as BadRequest
from foundation.api.microversion import Version
from providers.query_params import (
    AggregateQuery,
    TraitQuery,
    parse_member_of,
    parse_required,
    parse_resources,
)

A = "4e8e5957-649f-477b-9e5b-f1f75b21c03c"
B = "542df8ed-9be2-49b9-b4db-6d3183ff8ec8"
V = Version


def detail(fn, *args):
    with pytest.raises(BadRequest) as info:
        fn(*args)
    return info.value.message


class TestResources:
    def test_parses_and_last_amount_wins(self):
        assert parse_resources("VCPU:1,MEMORY_MB:512,VCPU:2") == {"VCPU": 2, "MEMORY_MB": 512}

    @pytest.mark.parametrize("value", ["", "  "])
    def test_empty(self, value):
        assert detail(parse_resources, value).endswith("Got: empty string.")

    @pytest.mark.parametrize("value,element", [
        ("VCPU:1,", ""), ("VCPU", "VCPU"), ("VCPU:1:2", "VCPU:1:2")])
    def test_badly_formed(self, value, element):
        assert detail(parse_resources, value) == (
            "Badly formed resources parameter. Expected resources query string parameter "
            f"in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: {element}.")

    def test_amount_not_integer(self):
        assert detail(parse_resources, "VCPU:x") == (
            "Requested resource VCPU expected positive integer amount. Got: x.")

    @pytest.mark.parametrize("amount", ["0", "-1"])
    def test_amount_below_one(self, amount):
        assert detail(parse_resources, f"VCPU:{amount}") == (
            f"Requested resource VCPU requires amount >= 1. Got: {amount}.")


class TestRequired:
    def test_plain_and_forbidden(self):
        query = parse_required(["A, B,!C,!!D"], V(1, 22))
        assert query == TraitQuery(required=frozenset("AB"), forbidden=frozenset("CD"))
        assert query.names() == {"A", "B", "C", "D"}

    def test_last_occurrence_below_1_39(self):
        assert parse_required(["A", "B"], V(1, 38)).required == {"B"}

    def test_anded_and_any_of_from_1_39(self):
        query = parse_required(["in:A,B", "C,!D"], V(1, 39))
        assert query.required == {"C"}
        assert query.forbidden == {"D"}
        assert query.any_of == (frozenset("AB"),)
        assert query.required_sets() == [frozenset("C"), frozenset("AB")]

    @pytest.mark.parametrize("value", ["", "A,,B", "A,", "!"])
    def test_empty_trait(self, value):
        assert detail(parse_required, [value], V(1, 22)) == (
            "Invalid query string parameters: Expected 'required' parameter value of the "
            f"form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: {value}")

    def test_empty_trait_form_before_1_22(self):
        assert "form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: A," in detail(
            parse_required, ["A,"], V(1, 21))

    def test_forbidden_before_1_22(self):
        assert detail(parse_required, ["A,!B"], V(1, 21)) == (
            "Invalid query string parameters: Expected 'required' parameter value of the "
            "form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: A,!B")

    def test_in_before_1_39(self):
        assert detail(parse_required, ["in:A,B"], V(1, 38)) == (
            "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion "
            "1.39. Got: in:A,B")

    def test_in_with_empty_element(self):
        assert "form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: in:A," in detail(
            parse_required, ["in:A,"], V(1, 39))

    def test_in_with_forbidden(self):
        assert "does not support forbidden traits. Got: in:A,!B" in detail(
            parse_required, ["in:A,!B"], V(1, 39))


class TestMemberOf:
    def test_forms(self):
        query = parse_member_of([A, f"in:{A},{B}", f"!{B}", f"!in:{A},{B}"], V(1, 32))
        assert query == AggregateQuery(any_of=(frozenset([A]), frozenset([A, B])),
                                       forbidden=frozenset([A, B]))

    def test_kept_as_given(self):
        dashless = A.replace("-", "").upper()
        assert parse_member_of([dashless], V(1, 3)).any_of == (frozenset([dashless]),)

    def test_repeat_before_1_24(self):
        assert detail(parse_member_of, [A, B], V(1, 23), "member_of1") == (
            "Multiple member_of1 parameters are not supported")

    @pytest.mark.parametrize("value", [f"!{A}", f"!in:{A},{B}"])
    def test_forbidden_before_1_32(self, value):
        assert detail(parse_member_of, [value], V(1, 31)) == (
            "Forbidden member_of parameters are not supported in the specified microversion")

    def test_comma_without_in(self):
        assert detail(parse_member_of, [f"{A},{B}"], V(1, 32)).startswith(
            "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword")

    @pytest.mark.parametrize("value,bad", [
        ("nope", "nope"), ("in:", ""), (f"in:{A},!{B}", f"!{B}")])
    def test_not_uuid(self, value, bad):
        assert detail(parse_member_of, [value], V(1, 32)) == (
            "Invalid query string parameters: Expected 'member_of' parameter to contain "
            f"valid UUID(s). Got: {bad}")
