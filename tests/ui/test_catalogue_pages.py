"""Resource class and trait pages: custom names created and deleted through the services,
standard names and names in use protected, refusals shown in Placement's words."""
import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from providers.models import ResourceClass, Trait
from tests.conftest import error_detail
from tests.factories import allocate, make_consumer, make_provider

pytestmark = pytest.mark.django_db


def text(response):
    return response.content.decode()


def shown(response):
    """The messages a redirected action left for the next page."""
    return [str(m) for m in get_messages(response.wsgi_request)]


def form_errors(response):
    return [e for errors in response.context["form"].errors.values() for e in errors]


def api_message(response):
    """Placement's message in an API error body, without the status title before it."""
    return error_detail(response).split("\n\n", 1)[1].strip()


def rows(response, section):
    return {row.name: row for row in response.context[section]}


# --- resource classes ---------------------------------------------------------------------

def test_resource_classes_list_custom_and_standard_with_use(client, sample):
    make_provider("gpu-host", inventory={"CUSTOM_GPU": 2})
    ResourceClass.objects.create(name="CUSTOM_SPARE")
    response = client.get(reverse("ui:resource-classes"))
    assert response.status_code == 200
    custom = rows(response, "custom")
    assert list(custom) == ["CUSTOM_GPU", "CUSTOM_SPARE"]
    assert (custom["CUSTOM_GPU"].providers, custom["CUSTOM_GPU"].in_use) == (1, True)
    assert custom["CUSTOM_SPARE"].in_use is False
    standard = rows(response, "standard")
    assert (standard["VCPU"].providers, standard["VCPU"].used) == (3, 8)
    assert (standard["MEMORY_MB"].providers, standard["MEMORY_MB"].used) == (2, 2560)
    body = text(response)
    assert reverse("ui:resource-class-delete", args=["CUSTOM_SPARE"]) in body
    # standard classes offer no delete
    assert reverse("ui:resource-class-delete", args=["VCPU"]) not in body


def test_create_resource_class(client, db):
    response = client.post(reverse("ui:resource-classes"), {"name": "CUSTOM_FPGA"})
    assert response.status_code == 302
    assert ResourceClass.objects.filter(name="CUSTOM_FPGA").exists()
    assert shown(response) == ["Created resource class CUSTOM_FPGA."]

    again = client.post(reverse("ui:resource-classes"), {"name": "CUSTOM_FPGA"})
    assert again.status_code == 200  # the form again, with its errors
    assert form_errors(again) == ["Conflicting resource class already exists: CUSTOM_FPGA"]


BAD_NAMES = {
    "fpga": "fpga cannot be created: a new name must start with CUSTOM_ (e.g. CUSTOM_FPGA).",
    "CUSTOM_lower": "CUSTOM_lower cannot be created: after CUSTOM_ only upper-case letters, "
                    "digits and underscores are allowed (e.g. CUSTOM_LOWER).",
    "VCPU": "VCPU is a standard resource class: it exists already, nothing to create.",
    "CUSTOM_" + "X" * 249: "The name has 256 characters; at most 255 are allowed.",
}


# VCPU is a standard class, not a trait
TRAIT_BAD_NAMES = {
    "VCPU": "VCPU cannot be created: a new name must start with CUSTOM_ (e.g. CUSTOM_VCPU)."}


@pytest.mark.parametrize("name", BAD_NAMES)
def test_create_resource_class_bad_name_in_plain_words(client, api, name):
    before = ResourceClass.objects.count()
    response = client.post(reverse("ui:resource-classes"), {"name": name})
    assert response.status_code == 200  # the form again, with its errors
    assert ResourceClass.objects.count() == before
    error, = form_errors(response)
    # the API refuses it too, in its schema's terms; the page says it for people
    assert api.post("/resource_classes", {"name": name}).status_code == 400
    assert error == BAD_NAMES[name]
    assert "JSON does not validate" not in text(response)
    assert escape(error) in text(response)


def test_delete_resource_class_asks_first(client, db):
    ResourceClass.objects.create(name="CUSTOM_OLD")
    url = reverse("ui:resource-class-delete", args=["CUSTOM_OLD"])
    response = client.post(url)
    assert response.status_code == 200
    assert "Delete resource class <span class=\"mono\">CUSTOM_OLD</span>?" in text(response)
    assert f'action="{url}"' in text(response) and 'name="confirm" value="yes"' in text(response)
    assert ResourceClass.objects.filter(name="CUSTOM_OLD").exists()   # asked, not deleted
    response = client.post(url, {"confirm": "yes"})
    assert response.status_code == 302 and response["Location"] == reverse("ui:resource-classes")
    assert shown(response) == ["Deleted resource class CUSTOM_OLD."]
    assert not ResourceClass.objects.filter(name="CUSTOM_OLD").exists()


@pytest.mark.parametrize("name, message", [
    ("CUSTOM_GPU", "Error in delete resource class: Cannot delete resource class CUSTOM_GPU. "
                   "Class is in use in inventory."),
    ("VCPU", "Error in delete resource class: Cannot delete standard resource class VCPU."),
    ("CUSTOM_NOPE", "No such resource class CUSTOM_NOPE."),
])
def test_delete_resource_class_refused(client, api, name, message):
    make_provider("gpu-host", inventory={"CUSTOM_GPU": 2})
    response = client.post(reverse("ui:resource-class-delete", args=[name]))
    assert response.status_code == 302
    assert shown(response) == [message]
    assert api_message(api.delete(f"/resource_classes/{name}")) == message
    assert ResourceClass.objects.filter(name="CUSTOM_GPU").exists()


def test_delete_resource_class_held_without_inventory_is_refused_not_a_500(client, db):
    """Allocations left without inventory (placement_status's failure) protect the class."""
    rp = make_provider("cn1", inventory={"VCPU": 4})
    # the services refuse an allocation without inventory (and of an unknown class)
    allocate(make_consumer(), rp, CUSTOM_ORPHAN=1, unchecked=True)
    response = client.post(reverse("ui:resource-class-delete", args=["CUSTOM_ORPHAN"]))
    assert response.status_code == 302
    assert shown(response) == ["Error in delete resource class: Cannot delete resource class "
                               "CUSTOM_ORPHAN. Class is in use in inventory."]


def test_resource_class_delete_is_post_only(client, db):
    ResourceClass.objects.create(name="CUSTOM_OLD")
    assert client.get(reverse("ui:resource-class-delete", args=["CUSTOM_OLD"])).status_code == 405
    assert ResourceClass.objects.filter(name="CUSTOM_OLD").exists()


# --- traits ---------------------------------------------------------------------------------

def test_traits_list_and_filter(client, sample):
    Trait.objects.create(name="CUSTOM_GOLD")
    make_provider("silver-host", traits=["CUSTOM_SILVER"])
    response = client.get(reverse("ui:traits"))
    custom = rows(response, "custom")
    assert list(custom) == ["CUSTOM_GOLD", "CUSTOM_SILVER"]
    assert (custom["CUSTOM_GOLD"].in_use, custom["CUSTOM_SILVER"].providers) == (False, 1)
    standard = rows(response, "standard")
    assert standard["HW_CPU_X86_AVX2"].providers == 1 and len(standard) > 100

    narrowed = client.get(reverse("ui:traits"), {"q": "silver"})
    assert list(rows(narrowed, "custom")) == ["CUSTOM_SILVER"]
    assert rows(narrowed, "standard") == {}
    numa = client.get(reverse("ui:traits"), {"q": "numa_root"})
    assert list(rows(numa, "standard")) == ["HW_NUMA_ROOT"]


def test_create_trait_and_again(client, db):
    response = client.post(reverse("ui:traits"), {"name": "CUSTOM_GOLD"})
    assert response.status_code == 302
    assert shown(response) == ["Created trait CUSTOM_GOLD."]
    assert Trait.objects.filter(name="CUSTOM_GOLD").exists()
    # as PUT /traits/{name}: an existing trait is left as it is
    again = client.post(reverse("ui:traits"), {"name": "CUSTOM_GOLD"}, follow=True)
    assert [str(m) for m in again.context["messages"]][-1] == "Trait CUSTOM_GOLD already exists."


@pytest.mark.parametrize("name", BAD_NAMES)
def test_create_trait_bad_name_in_plain_words(client, api, name):
    response = client.post(reverse("ui:traits"), {"name": name})
    assert response.status_code == 200  # the form again, with its errors
    error, = form_errors(response)
    assert api.put(f"/traits/{name}").status_code == 400
    assert error == TRAIT_BAD_NAMES.get(name, BAD_NAMES[name])
    assert escape(error) in text(response)


def test_create_needs_a_name(client, db):
    response = client.post(reverse("ui:traits"), {"name": "  "})
    assert response.status_code == 200  # the form again, with its errors
    assert form_errors(response) == ["This field is required."]


def test_delete_trait_asks_first(client, db):
    Trait.objects.create(name="CUSTOM_GOLD")
    url = reverse("ui:trait-delete", args=["CUSTOM_GOLD"])
    response = client.post(url, {"q": "gold"})
    assert response.status_code == 200
    assert "Delete trait <span class=\"mono\">CUSTOM_GOLD</span>?" in text(response)
    assert '<input type="hidden" name="q" value="gold">' in text(response)
    assert Trait.objects.filter(name="CUSTOM_GOLD").exists()   # asked, not deleted
    response = client.post(url, {"q": "gold", "confirm": "yes"})
    assert response["Location"] == reverse("ui:traits") + "?q=gold"
    assert shown(response) == ["Deleted trait CUSTOM_GOLD."]
    assert not Trait.objects.filter(name="CUSTOM_GOLD").exists()


@pytest.mark.parametrize("name, message", [
    ("CUSTOM_SILVER", "The trait CUSTOM_SILVER is in use by a resource provider."),
    ("HW_CPU_X86_AVX2", "Cannot delete standard trait HW_CPU_X86_AVX2."),
    ("CUSTOM_NOPE", "No such trait(s): CUSTOM_NOPE."),
])
def test_delete_trait_refused(client, api, name, message):
    make_provider("silver-host", traits=["CUSTOM_SILVER"])
    response = client.post(reverse("ui:trait-delete", args=[name]))
    assert response.status_code == 302
    assert shown(response) == [message]
    assert api_message(api.delete(f"/traits/{name}")) == message
    assert Trait.objects.filter(name="CUSTOM_SILVER").exists()


def test_refusal_is_shown_on_the_page(client, db):
    make_provider("silver-host", traits=["CUSTOM_SILVER"])
    response = client.post(reverse("ui:trait-delete", args=["CUSTOM_SILVER"]), follow=True)
    assert response.status_code == 200
    assert ('<li class="error">The trait CUSTOM_SILVER is in use by a resource provider.</li>'
            in text(response))


@pytest.mark.parametrize("name", ["ui:resource-classes", "ui:traits"])
def test_catalogue_pages_take_constant_queries(client, db, name):
    def count():
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse(name)).status_code == 200
        return len(captured)

    make_provider("a", inventory={"CUSTOM_A": 1}, traits=["CUSTOM_A"])
    few = count()
    for i in range(20):
        rp = make_provider(f"p{i}", inventory={f"CUSTOM_C{i}": 4, "VCPU": 2},
                           traits=[f"CUSTOM_T{i}", "HW_CPU_X86_AVX2"])
        allocate(make_consumer(), rp, VCPU=1)
    assert count() == few


# --- issue 43, item 8: wording ---------------------------------------------------------------

@pytest.mark.parametrize("page, name, kind", [
    ("ui:traits", "HW_CPU_X86_AVX2", "trait"), ("ui:resource-classes", "VCPU", "resource class")])
def test_a_standard_name_is_said_to_exist_already(client, db, page, name, kind):
    response = client.post(reverse(page), {"name": name})
    assert form_errors(response) == [f"{name} is a standard {kind}: it exists already, "
                                     "nothing to create."]


@pytest.mark.parametrize("name", ["CUSTOM_", "custom_", "_"])
def test_the_example_of_a_valid_name_is_a_valid_name(client, db, name):
    errors = form_errors(client.post(reverse("ui:traits"), {"name": name}))
    assert errors == [f"{name} cannot be created: a name is CUSTOM_ followed by at least one "
                      "upper-case letter, digit or underscore (e.g. CUSTOM_FPGA)."]


def test_the_pages_have_an_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert '<link rel="icon" href="/favicon.ico"' in text(client.get(reverse("ui:dashboard")))
