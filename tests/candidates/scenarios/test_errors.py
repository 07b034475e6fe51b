"""§3 validation and §7.9 errors, each with its status and code."""
import pytest

from tests.conftest import error_code, error_detail
from tests.factories import make_provider

AGG = "a0000000-0000-0000-0000-00000000000a"

CASES = [
    # (query, version, status, code, detail substring)
    ("resources=VCPU:1", "1.9", 404, None, ""),
    ("", "1.10", 400, None, "'resources' is a required property"),
    ("resources=", "1.10", 400, None, "Got: empty string."),
    ("resources=MCPU:99", "1.10", 400, None, "Invalid resource class in resources parameter"),
    ("resources=VCPU:1&limit=5", "1.15", 400, None, "'limit' was unexpected"),
    ("resources=VCPU:1&limit=0", "1.16", 400, None, "Failed validating 'pattern'"),
    ("resources=VCPU:1&limit=cow", "1.16", 400, None, "Failed validating 'pattern'"),
    ("resources=VCPU:1&limit=-99", "1.16", 400, None, "Failed validating 'pattern'"),
    ("resources=VCPU:1&limit=x&limit=2", "1.16", 400, None, "Failed validating 'pattern'"),
    ("resources=VCPU:1&required=HW_CPU_X86_SSE", "1.16", 400, None,
     "'required' was unexpected"),
    ("resources=VCPU:1&required=!CUSTOM_MAGIC", "1.17", 400, None,
     "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC."),
    ("resources=VCPU:1&required=INVALID_TRAIT", "1.17", 400, None, "No such trait(s)"),
    ("resources=MEMORY_MB:1024&resources1=VCPU:1", "1.24", 400, None,
     "'resources1' was unexpected"),
    ("resources01=VCPU:1", "1.25", 400, None, "'resources01' does not match any of the regexes"),
    ("resources_A=VCPU:1", "1.32", 400, None, "does not match any of the regexes"),
    ("resources" + "X" * 65 + "=VCPU:1", "1.33", 400, None,
     "does not match any of the regexes"),
    ("resources_A.B=VCPU:1", "1.33", 400, None, "'resources_A.B' does not match any of"),
    ("resources_A=VCPU:1&in_tree_A=x", "1.32", 400, None, "'in_tree_A', 'resources_A' do not"),
    ("resources=VCPU:1&limit=1&limit=x", "1.16", 400, None, "Failed validating 'pattern'"),
    ("resources=VCPU:1&limit=1.5", "1.16", 400, None, "Failed validating 'pattern'"),
    ("resources1=VCPU:1&required2=CUSTOM_X&same_subtree=1,2", "1.36", 400, None,
     '"group_policy" parameter is required'),
    ("resources1=VCPU:1&same_subtree=1&same_subtree=1,_B&group_policy=none", "1.36", 400,
     "placement.query.bad_value", "Real suffixes should be specified in `same_subtree`"),
    ("resources=VCPU:1&same_subtree=_A", "1.35", 400, None, "same_subtree"),
    ("resources=VCPU:1&group_policy=none", "1.24", 400, None, "group_policy"),
    ("resources1=VCPU:1&resources2=VCPU:1", "1.25", 400, "placement.undefined_code",
     '"group_policy" parameter is required'),
    ("resources1=VCPU:1&group_policy=bogus", "1.25", 400, None,
     "'bogus' is not one of ['none', 'isolate']"),
    ("required=FOO&required1=BAR", "1.25", 400, None,
     "orphaned traits keys: required, required1"),
    (f"resources=VCPU:1&member_of3={AGG}", "1.25", 400, None,
     "orphaned member_of keys: member_of3"),
    ("resources=VCPU:1&required1=!CUSTOM_X", "1.25", 400, None,
     "All request groups must specify resources."),
    ("resources=VCPU:1&in_tree1=00000000-0000-0000-0000-000000000001", "1.31", 400, None,
     "All request groups must specify resources."),
    (f"resources=VCPU:1&member_of1=!{AGG}&required1=!CUSTOM_X", "1.32", 400, None,
     "orphaned member_of keys: member_of1"),
    (f"resources=VCPU:1&member_of1={AGG}&required2=CUSTOM_X&required1=!CUSTOM_X", "1.35",
     400, None, "orphaned traits keys: required2"),
    ("group_policy=isolate", "1.25", 400, None,
     "At least one request group (`resources` or `resources{$S}`) is required."),
    ("resources=VCPU:1&in_tree=life-is-beautiful", "1.31", 400, None,
     "Expected 'in_tree' parameter to be a format of uuid"),
    ("resources=VCPU:1&in_tree=00000000-0000-0000-0000-000000000000", "1.30", 400, None,
     "does not match any of the regexes"),
    (f"resources=VCPU:1&member_of=!{AGG}", "1.31", 400, None,
     "Forbidden member_of parameters are not supported in the specified microversion"),
    ("resources=VCPU:1&member_of=in:", "1.24", 400, None,
     "Expected 'member_of' parameter to contain valid UUID(s)."),
    (f"resources=VCPU:1&member_of={AGG}&member_of={AGG}", "1.23", 400, None,
     "Multiple member_of parameters are not supported"),
    ("resources=VCPU:1&root_required=A&root_required=!B", "1.35", 400,
     "placement.query.duplicate_key", "may be specified only once"),
    ("resources=VCPU:1&root_required=X,!X", "1.35", 400, "placement.query.bad_value",
     "Conflicting required and forbidden traits found in root_required: X"),
    ("resources=VCPU:1&root_required=A,,B", "1.35", 400, None, "Got an empty trait in"),
    ("resources=VCPU:1&root_required=in:A,B", "1.39", 400, None,
     "only supported since microversion 1.39"),
    ("resources=VCPU:1&root_required=A", "1.34", 400, None, "root_required"),
    (f"member_of1={AGG}&group_policy=none", "1.36", 400, "placement.query.missing_value",
     "There must be at least one resources or resources[$S] parameter."),
    ("resources1=VCPU:1&required2=T&group_policy=none", "1.36", 400,
     "placement.query.bad_value", "bad group(s) - ['2']"),
    ("required=FOO&resources1=VCPU:1", "1.36", 400, "placement.query.bad_value",
     "bad group(s) - ['']"),
    ("resources_COMPUTE=VCPU:1&resources_ACCEL=FPGA:1&same_subtree=COMPUTE,_ACCEL"
     "&group_policy=none", "1.36", 400, "placement.query.bad_value",
     "Real suffixes should be specified in `same_subtree`: ['COMPUTE'] not found in "
     "['_COMPUTE', '_ACCEL']"),
    ("resources_COMPUTE=VCPU:1&resources_ACCEL=FPGA:1&same_subtree=_COMPUTE,,_ACCEL"
     "&group_policy=none", "1.36", 400, "placement.query.bad_value",
     "Empty string (unsuffixed group) can not be specified in `same_subtree`"),
    ("resources=VCPU:1&same_subtree=", "1.36", 400, "placement.query.bad_value",
     "Empty string (unsuffixed group)"),
    ("resources=VCPU:1&required=in:A,B", "1.38", 400, None,
     "only supported since microversion 1.39"),
    ("resources=VCPU:1&required=A,!A", "1.22", 400, None,
     "Conflicting required and forbidden traits found in the following traits keys: "
     "required: (A)"),
    ("resources=VCPU:1&required=in:A&required=!A", "1.39", 400, None,
     "required: (A)"),
    ("resources=VCPU:1&resources_X=VCPU:1&required_X=B,!B&group_policy=none", "1.39", 400,
     None, "required_X: (B)"),
]


@pytest.mark.parametrize("query,version,status,code,detail", CASES)
def test_error(api, query, version, status, code, detail):
    response = api.get(f"/allocation_candidates?{query}", version=version)
    assert response.status_code == status, response.content
    if code:
        assert error_code(response) == code
    assert detail in error_detail(response)


def test_in_and_forbidden_of_one_member_is_fine(api):
    response = api.get("/allocation_candidates?resources=VCPU:1&required=in:HW_CPU_X86_SSE,"
                       "HW_CPU_X86_AVX&required=!HW_CPU_X86_SSE")
    assert response.status_code == 200


def test_accept_and_policy(api):
    response = api.get("/allocation_candidates?resources=VCPU:1", headers={"Accept": "text/plain"})
    assert response.status_code == 406
    response = api.get("/allocation_candidates?resources=VCPU:1", token="user")
    assert response.status_code == 403


def test_post_is_405(api):
    response = api.post("/allocation_candidates", {})
    assert response.status_code == 405
    assert response["Allow"] == "GET"


class TestLazyNameResolution:
    """§3.6 / Q4: evaluation stops at the first step proving emptiness; the steps within
    one group and before the groups come in the spec's order."""

    def test_impossible_first_group_hides_unknown_class(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get("/allocation_candidates?resources1=VCPU:9999&resources2=NOPE:1"
                           "&group_policy=none")
        assert response.status_code == 200
        assert response.json() == {"allocation_requests": [], "provider_summaries": {}}

    def test_unknown_class_first_is_reported(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get("/allocation_candidates?resources2=NOPE:1&resources1=VCPU:9999"
                           "&group_policy=none")
        assert response.status_code == 400
        assert "No such resource class NOPE." in error_detail(response)

    def test_unknown_trait_after_possible_group(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get("/allocation_candidates?resources1=VCPU:1&resources2=VCPU:1"
                           "&required2=CUSTOM_NOPE,CUSTOM_ALSO_NOPE&group_policy=none")
        assert response.status_code == 400
        assert "No such trait(s): CUSTOM_ALSO_NOPE, CUSTOM_NOPE." in error_detail(response)

    def test_member_of_matching_nothing_hides_unknown_trait(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get(f"/allocation_candidates?resources=VCPU:1&member_of={AGG}"
                           "&required=CUSTOM_NOPE")
        assert response.status_code == 200
        assert response.json()["allocation_requests"] == []

    def test_unknown_forbidden_trait_is_reported(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get("/allocation_candidates?resources=VCPU:1&required=!CUSTOM_NOPE")
        assert response.status_code == 400

    def test_unknown_root_required_trait_first(self, api, db):
        response = api.get("/allocation_candidates?resources=NOPE:1&root_required=CUSTOM_NOPE")
        assert response.status_code == 400
        assert "No such trait(s): CUSTOM_NOPE." in error_detail(response)

    def test_missing_in_tree_hides_unknown_class_of_later_group(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get("/allocation_candidates?resources1=VCPU:1"
                           "&in_tree1=00000000-0000-0000-0000-00000000dead"
                           "&resources2=NOPE:1&group_policy=none")
        assert response.status_code == 200

    def test_missing_in_tree_of_resourceless_group_hides_unknown_class(self, api, db):
        make_provider("cn", inventory={"VCPU": 8}, traits=["CUSTOM_HERE"])
        query = ("resources1=VCPU:1&required2=CUSTOM_HERE"
                 "&in_tree2=00000000-0000-0000-0000-00000000dead&resources3=NOPE:1"
                 "&same_subtree=1,2&group_policy=none")
        response = api.get(f"/allocation_candidates?{query}")
        assert response.status_code == 200
        assert response.json()["allocation_requests"] == []
        without_in_tree = query.replace("&in_tree2=00000000-0000-0000-0000-00000000dead", "")
        response = api.get(f"/allocation_candidates?{without_in_tree}")
        assert response.status_code == 400
        assert "No such resource class NOPE." in error_detail(response)

    def test_root_required_matching_no_root_hides_unknown_class(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get("/allocation_candidates?resources=NOPE:1"
                           "&root_required=HW_CPU_X86_AVX")
        assert response.status_code == 200
        assert response.json() == {"allocation_requests": [], "provider_summaries": {}}

    def test_unknown_trait_before_missing_in_tree(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get("/allocation_candidates?resources=VCPU:1&required=CUSTOM_NOPE"
                           "&in_tree=00000000-0000-0000-0000-00000000dead")
        assert response.status_code == 400
        assert "No such trait(s): CUSTOM_NOPE." in error_detail(response)

    def test_unknown_class_before_member_of_matching_nothing(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get(f"/allocation_candidates?resources=NOPE:1&member_of={AGG}")
        assert response.status_code == 400

    def test_amount_fitting_nowhere_hides_unknown_trait_of_later_group(self, api, db):
        make_provider("cn", inventory={"VCPU": 8})
        response = api.get("/allocation_candidates?resources=VCPU:9&resources1=VCPU:1"
                           "&required1=CUSTOM_NOPE")
        assert response.status_code == 200
        assert response.json()["allocation_requests"] == []

    def test_group_without_partials_hides_unknown_trait_of_later_group(self, api, db):
        """VCPU and MEMORY_MB both fit somewhere, but not on one provider."""
        make_provider("cn1", inventory={"VCPU": 8})
        make_provider("cn2", inventory={"MEMORY_MB": 8})
        query = "resources1=VCPU:1,MEMORY_MB:1&resources2=VCPU:1&required2=CUSTOM_NOPE"
        response = api.get(f"/allocation_candidates?{query}&group_policy=none")
        assert response.status_code == 200
        response = api.get(f"/allocation_candidates?{query.replace('MEMORY_MB:1', 'VCPU:1')}"
                           "&group_policy=none")
        assert response.status_code == 400


def test_longest_string_suffix(api, db):
    make_provider("cn", inventory={"VCPU": 8})
    suffix = "_" + "x" * 63
    response = api.get(f"/allocation_candidates?resources{suffix}=VCPU:1", version="1.34")
    assert response.status_code == 200
    [request] = response.json()["allocation_requests"]
    assert list(request["mappings"]) == [suffix]
