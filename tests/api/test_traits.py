"""/traits (traits.md, catalogue part)."""
import pytest

from providers.models import Trait
from tests.conftest import error_code, error_detail
from tests.factories import make_provider


def test_below_1_6_is_404(api):
    assert api.get("/traits", version="1.5").status_code == 404
    assert api.put("/traits/CUSTOM_A", version="1.5").status_code == 404


def test_list_has_all_standard_traits(api):
    response = api.get("/traits")
    assert response.status_code == 200
    traits = response.json()["traits"]
    assert len(traits) == 377
    assert "HW_CPU_X86_AVX2" in traits and "MISC_SHARES_VIA_AGGREGATE" in traits


def test_put_creates_then_verifies(api):
    created = api.put("/traits/CUSTOM_TRAIT_1")
    assert created.status_code == 201
    assert created["Location"].endswith("/traits/CUSTOM_TRAIT_1")
    assert "Last-Modified" in created and created["Cache-Control"] == "no-cache"
    assert api.put("/traits/CUSTOM_TRAIT_1").status_code == 204
    assert api.get("/traits/CUSTOM_TRAIT_1").status_code == 204
    assert "Last-Modified" not in api.put("/traits/CUSTOM_TRAIT_2", version="1.14")


@pytest.mark.parametrize("name", ["HW_NEW", "CUSTOM_lower", "CUSTOM_" + "A" * 249, "CUSTOM_A-B"])
def test_put_invalid_name(api, name):
    response = api.put(f"/traits/{name}")
    assert response.status_code == 400
    assert "The trait is invalid." in error_detail(response)


def test_get_unknown_is_404(api):
    response = api.get("/traits/CUSTOM_NOPE")
    assert response.status_code == 404
    assert "No such trait(s): CUSTOM_NOPE." in error_detail(response)


def test_filters(api):
    api.put("/traits/CUSTOM_A1")
    api.put("/traits/CUSTOM_A2")
    api.put("/traits/CUSTOM_B1")
    make_provider("rp", traits=["CUSTOM_A1", "HW_CPU_X86_AVX"])
    assert sorted(api.get("/traits?name=startswith:CUSTOM_A").json()["traits"]) == [
        "CUSTOM_A1", "CUSTOM_A2"]
    assert sorted(api.get("/traits?name=in:CUSTOM_A1,CUSTOM_B1,CUSTOM_ZZ").json()["traits"]) == [
        "CUSTOM_A1", "CUSTOM_B1"]
    assert sorted(api.get("/traits?associated=true").json()["traits"]) == [
        "CUSTOM_A1", "HW_CPU_X86_AVX"]
    unassociated = api.get("/traits?associated=FALSE&name=startswith:CUSTOM").json()["traits"]
    assert sorted(unassociated) == ["CUSTOM_A2", "CUSTOM_B1"]
    # an operator that is neither in nor startswith applies no name filter (quirk)
    assert len(api.get("/traits?name=foo:bar").json()["traits"]) == 380


@pytest.mark.parametrize("query, message", [
    ("name=CUSTOM_A", "Badly formatted name parameter"),
    ("associated=maybe", 'The query parameter "associated" only accepts "true" or "false"'),
    ("bogus=1", "Invalid query string parameters"),
])
def test_bad_filters(api, query, message):
    response = api.get(f"/traits?{query}")
    assert response.status_code == 400
    assert message in error_detail(response)


def test_delete(api):
    api.put("/traits/CUSTOM_GONE")
    assert api.delete("/traits/CUSTOM_GONE").status_code == 204
    assert not Trait.objects.filter(name="CUSTOM_GONE").exists()
    assert api.delete("/traits/CUSTOM_GONE").status_code == 404


def test_delete_standard_is_400(api):
    response = api.delete("/traits/HW_CPU_X86_AVX2")
    assert response.status_code == 400
    assert "Cannot delete standard trait HW_CPU_X86_AVX2." in error_detail(response)


def test_delete_in_use_is_409(api):
    api.put("/traits/CUSTOM_USED")
    make_provider("rp", traits=["CUSTOM_USED"])
    response = api.delete("/traits/CUSTOM_USED")
    assert response.status_code == 409
    assert "The trait CUSTOM_USED is in use by a resource provider." in error_detail(response)


def test_standard_names_sync_is_idempotent_and_keeps_custom(db):
    from providers.services.standard_names import standard_names_sync

    Trait.objects.create(name="CUSTOM_KEEP")
    Trait.objects.filter(name="HW_CPU_X86_AVX2").delete()
    added_rc, added_traits = standard_names_sync()
    assert added_rc == [] and added_traits == ["HW_CPU_X86_AVX2"]
    assert Trait.objects.filter(name="CUSTOM_KEEP").exists()
    assert standard_names_sync() == ([], [])


def test_every_route_below_1_6_is_404(api):
    for method in ("GET", "PUT", "DELETE"):
        assert api.request(method, "/traits/CUSTOM_A", version="1.5").status_code == 404
    assert not Trait.objects.filter(name="CUSTOM_A").exists()


def test_name_of_255_characters_and_no_body_or_content_type_check(api):
    name = "CUSTOM_" + "A" * 248
    response = api.put(f"/traits/{name}", raw="not json", content_type="text/plain")
    assert response.status_code == 201 and response.content == b""
    assert api.get(f"/traits/{name}").status_code == 204


def test_get_standard_trait(api):
    response = api.get("/traits/HW_CPU_X86_AVX2", version="1.15")
    assert response.status_code == 204 and response.content == b""
    assert response["Cache-Control"] == "no-cache" and response["Last-Modified"].endswith("GMT")


def test_name_format_checked_before_associated(api):
    response = api.get("/traits?name=CUSTOM_A&associated=maybe")
    assert "Badly formatted name parameter" in error_detail(response)
    assert 'Got: "CUSTOM_A"' in error_detail(response)


def test_delete_in_use_has_no_specific_code(api):
    api.put("/traits/CUSTOM_USED")
    make_provider("rp", traits=["CUSTOM_USED"])
    response = api.delete("/traits/CUSTOM_USED")
    assert error_code(response) == "placement.undefined_code"
    assert Trait.objects.filter(name="CUSTOM_USED").exists()
