"""Issue 52's rows 1-10 and its search box (feature 3) in a real browser, one test a row:
what the operator clicks and types, and the words, confirmations, 404s and order each
row asked for. Features 1, 2 and 4 are in test_bulk_membership_and_moves.py and
test_history.py; row 10's closed big trees in test_provider_list.py."""
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from allocations.models import Allocation
from providers.models import ChangeRecord, Inventory, ResourceProvider
from tests.browser.conftest import OPERATOR, PASSWORD, log_in, screenshot
from tests.ui.conftest import AGG, build_sample

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sample(operator):
    """tests/ui's sample: cn1 (AVX2, in AGG; its VCPU on two NUMA nodes), cn2 flat, a
    sharing disk in AGG, vm1 across cn1's tree and the disk, vm2 on cn2."""
    return build_sample()


def messages(ui):
    return ui.locator(".messages").inner_text()


def errors(ui):
    return " ".join(ui.locator("ul.errorlist").all_inner_texts())


def traits(provider):
    return sorted(provider.traits.values_list("name", flat=True))


def list_bulk(ui, resource_class, **filters):
    """The bulk inventory page, its class chosen and filters typed, listed."""
    ui.goto("/ui/bulk/")
    ui.select_option("#filter-form select[name=resource_class]", resource_class)
    for name, value in filters.items():
        ui.fill(f"#filter-form input[name={name}]", value)
    ui.get_by_role("button", name="List providers").click()
    ui.wait_for_selector("#bulk-scope")


def test_row_1_bulk_edit_by_aggregate_or_trait_reaches_the_numa_nodes(ui, sample):
    list_bulk(ui, "VCPU", aggregate=AGG)
    rows = ui.locator("table.bulk tbody tr")
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.provider)") == [
        "cn1-numa0", "cn1-numa1"]
    assert ui.locator("table.bulk tr[data-provider=cn1-numa0]").inner_text().count(
        "in the tree of cn1") == 1
    assert ("Left out: 1 matching tree without VCPU inventory anywhere: shared-disk."
            in ui.locator("#left-out").inner_text())
    screenshot(ui, "round-five-row-1-bulk-by-aggregate")
    # chosen by trait, the change reaches the nodes: preview and apply to every match
    list_bulk(ui, "VCPU", trait="HW_CPU_X86_AVX2")
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.provider)") == [
        "cn1-numa0", "cn1-numa1"]
    ui.get_by_label("every matching provider").check()
    ui.fill("input[name=allocation_ratio]", "2")
    ui.get_by_role("button", name="Preview").click()
    ui.get_by_role("button", name=re.compile(r"Apply to 2 providers")).click()
    ui.wait_for_selector(".messages")
    assert sorted(Inventory.objects.filter(resource_class__name="VCPU", allocation_ratio=2.0)
                  .values_list("provider__name", flat=True)) == ["cn1-numa0", "cn1-numa1"]


def test_row_2_reverting_a_consumers_first_entry_asks_before_freeing(ui, sample):
    vm2 = sample["vm2"]
    first = ChangeRecord.objects.filter(kind="consumer", entity=vm2.uuid).order_by("id")[0]
    ui.goto(f"/ui/consumers/{vm2.uuid}/")
    ui.get_by_role("button", name=f"Revert change {first.id}").click()
    ui.wait_for_selector("#confirm")
    box = ui.locator("#confirm").inner_text()
    assert "VCPU on cn2: 2 → 0 (removed)" in box
    assert "MEMORY_MB on cn2" in box and "(removed)" in box
    assert Allocation.objects.filter(consumer__uuid=vm2.uuid).count() == 2   # not yet
    screenshot(ui, "round-five-row-2-revert-asks")
    ui.get_by_role("button", name="Revert and free it").click()
    ui.wait_for_url(re.compile(re.escape(f"/ui/consumers/{vm2.uuid}/") + "$"))
    assert f"Reverted change {first.id}" in messages(ui)
    assert not Allocation.objects.filter(consumer__uuid=vm2.uuid).exists()


def test_row_3_the_admin_adds_under_a_parent_named_by_uuid_or_says_it_is_unknown(ui, sample):
    cn1 = sample["cn1"]
    ui.goto(f"/admin/providers/resourceprovider/add/?parent={cn1.uuid}")
    assert ui.locator(".field-parent .select2-selection__rendered").inner_text().strip(
        "×\n ").startswith("cn1")
    ui.fill("#id_name", "under-cn1")
    ui.locator("input[name=_save]").click()
    ui.wait_for_url(re.compile(r"/admin/providers/resourceprovider/$"))
    assert ResourceProvider.objects.get(name="under-cn1").parent_id == cn1.pk
    response = ui.goto("/admin/providers/resourceprovider/add/?parent=abc")
    assert response.status == 200
    assert "No resource provider 'abc' to add under: choose the parent below." in \
        ui.locator(".messagelist").inner_text()
    screenshot(ui, "round-five-row-3-admin-bad-parent")


@pytest.fixture(scope="module")
def front_door(tmp_path_factory):
    """placement-api (nginx in front of gunicorn), as production serves it, on a
    database of its own with one superuser: the browser tests' live server has no
    front door, and compression is the front door's."""
    if not (shutil.which("nginx") or os.path.exists("/usr/sbin/nginx")):
        pytest.skip("no nginx (scripts/bootstrap-nginx installs Debian's package)")
    directory = tmp_path_factory.mktemp("front-door")
    env = dict(os.environ, DATABASE_URL=f"sqlite:///{directory / 'db.sqlite3'}",
               DJANGO_SUPERUSER_PASSWORD=PASSWORD)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    for command in (["migrate", "--noinput", "-v0"],
                    ["createsuperuser", "--noinput", "--username", OPERATOR,
                     "--email", "op@example.invalid"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "placement_site.serve", "--workers", "1", "--threads", "4",
         "--bind", f"127.0.0.1:{port}", "--log-level", "critical"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("placement-api did not start")
            time.sleep(0.3)
    yield url
    process.terminate()
    process.wait(timeout=30)


def test_row_4_the_front_door_compresses_pages_and_static_files(browser, front_door):
    context = browser.new_context(base_url=front_door)
    tab = context.new_page()
    try:
        static = {}
        tab.on("response", lambda r: static.setdefault(r.url, r.headers)
               if "/static/" in r.url else None)
        log_in(tab, next_path="/ui/providers/")
        response = tab.goto("/ui/providers/")
        assert response.status == 200
        assert response.headers.get("content-encoding") == "gzip"
        assert "vary" in response.headers
        assert any(headers.get("content-encoding") == "gzip" and url.endswith((".css", ".js"))
                   for url, headers in static.items()), static
        screenshot(tab, "round-five-row-4-compressed-provider-list")
    finally:
        context.close()


def save_inventory(ui, **fields):
    """Type `fields` into the provider page's inventory form and save it."""
    form = ui.locator("#inventory-form")
    for name, value in fields.items():
        form.locator(f"input[name={name}]").fill(value)
    form.get_by_role("button", name="Save").click()
    return form


def test_row_5_an_inventory_that_can_take_no_allocation_is_warned_of(ui, sample):
    cn2 = sample["cn2"]
    ui.goto(f"/ui/providers/{cn2.uuid}/?edit=VCPU#inventory-form")
    save_inventory(ui, min_unit="20", max_unit="10")
    ui.wait_for_selector(".messages")
    assert ("The VCPU inventory of cn2 can take no allocation: min_unit 20 is above "
            "max_unit 10." in messages(ui))
    inventory = Inventory.objects.get(provider=cn2, resource_class__name="VCPU")
    assert (inventory.min_unit, inventory.max_unit) == (20, 10)   # saved, as Placement does
    screenshot(ui, "round-five-row-5-warning")
    ui.goto("/ui/status/")
    check = ui.locator(".check", has_text="Inventories can take allocations")
    assert "min_unit 20 is above max_unit 10" in check.inner_text()
    assert "cn2" in check.inner_text()


@pytest.mark.parametrize("field, value, message", [
    ("reserved", "-3", "reserved must be an integer from 0 to 2147483647; got -3."),
    ("reserved", str(2 ** 63), "reserved must be an integer from 0 to 2147483647"),
    ("allocation_ratio", "1e400", "Enter a finite number for the allocation ratio"),
])
def test_row_6_a_bulk_value_no_provider_can_take_is_the_forms_error(ui, sample, field,
                                                                    value, message):
    list_bulk(ui, "VCPU")
    ui.get_by_label("every matching provider").check()
    ui.fill(f"input[name={field}]", value)
    ui.get_by_role("button", name="Preview").click()
    ui.wait_for_selector("ul.errorlist")
    assert message in errors(ui)
    assert ui.locator("table.preview").count() == 0       # no preview of refusals
    assert "would be refused" not in ui.locator("main").inner_text()
    screenshot(ui, f"round-five-row-6-{field}-{len(value)}")


def test_row_7_reparenting_a_host_under_its_own_numa_node_says_cycle(ui, sample):
    cn1 = sample["cn1"]
    ui.goto(f"/admin/providers/resourceprovider/{cn1.pk}/change/")
    ui.locator(".field-parent .select2-selection").click()
    ui.locator(".select2-search__field").fill("cn1-numa0")
    ui.locator(".select2-results__option", has_text="cn1-numa0").click()
    ui.locator("input[name=_save]").click()
    ui.wait_for_selector(".errorlist")
    assert "cn1-numa0 is below cn1 in its tree: as its parent it would make a cycle." in \
        errors(ui)
    assert "Select a valid choice" not in errors(ui)
    cn1.refresh_from_db()
    assert cn1.parent_id is None
    screenshot(ui, "round-five-row-7-cycle")


def test_row_8_emptying_the_traits_box_asks_and_says_what_went(ui, sample):
    cn1 = sample["cn1"]
    ui.goto(f"/ui/providers/{cn1.uuid}/")
    ui.locator("textarea[name=traits]").fill("")
    ui.get_by_role("button", name="Save traits").click()
    ui.wait_for_selector("#traits-confirm")
    box = ui.locator("#traits-confirm").inner_text()
    assert "Confirm: remove 1 trait from cn1" in box and "HW_CPU_X86_AVX2" in box
    assert traits(cn1) == ["HW_CPU_X86_AVX2"]            # nothing written yet
    screenshot(ui, "round-five-row-8-traits-confirm")
    ui.get_by_role("button", name="Remove 1 trait").click()
    ui.wait_for_selector(".messages")
    assert "Traits of cn1: removed HW_CPU_X86_AVX2." in messages(ui)
    assert "Saved 0 trait" not in messages(ui)
    assert traits(cn1) == []


def test_row_9_the_inventory_form_creates_an_unknown_custom_class_when_ticked(ui, sample):
    cn2 = sample["cn2"]
    ui.goto(f"/ui/providers/{cn2.uuid}/")
    form = save_inventory(ui, resource_class="CUSTOM_FPGA", total="4")
    ui.wait_for_selector("#inventory-form ul.errorlist")
    assert "CUSTOM_FPGA" in errors(ui)
    assert not Inventory.objects.filter(resource_class__name="CUSTOM_FPGA").exists()
    form.get_by_label("Create the CUSTOM_ class if it is new").check()
    form.locator("input[name=total]").fill("4")
    form.get_by_role("button", name="Save").click()
    ui.wait_for_selector(".messages")
    assert Inventory.objects.get(provider=cn2, resource_class__name="CUSTOM_FPGA").total == 4
    assert "CUSTOM_FPGA" in ui.locator("#inventories + table td.rc").all_inner_texts()
    screenshot(ui, "round-five-row-9-custom-class")


def test_row_10_names_messages_a_404_and_separators(ui, sample):
    # the status page names an over-capacity provider
    Inventory.objects.filter(provider=sample["cn2"], resource_class__name="VCPU").update(
        total=1, allocation_ratio=1.0)
    ui.goto("/ui/status/")
    assert ui.locator("#over-capacity tbody td:first-child a").all_inner_texts() == ["cn2"]
    # what a page cannot use is said
    ui.goto("/ui/capacity/?rc=NOPE")
    assert "No provider has NOPE inventory" in messages(ui)
    ui.goto("/ui/providers/?page=abc")
    assert "There is no page 'abc': this is page 1 of 1." in messages(ui)
    # a batch that never was is a 404
    assert ui.goto("/ui/bulk/batch/nope/").status == 404
    # why-not's group label and its reason are apart
    ui.goto("/ui/candidates/why-not/?q=resources%3DMEMORY_MB%3A204800&version=1.39")
    labelled = ui.locator("ul.reasons li:has(span.group)")
    assert labelled.count() >= 1
    for text in labelled.all_inner_texts():
        assert re.match(r"resources\w*: \S", text), text
    screenshot(ui, "round-five-row-10-why-not")
    # a consumer's allocation tags are apart
    ui.goto("/ui/consumers/")
    row = ui.locator("table tbody tr", has_text=sample["vm1"].uuid)
    tags = row.locator("span.tag").all_inner_texts()
    assert len(tags) == 3
    assert " ".join(tags) in row.inner_text()
    screenshot(ui, "round-five-row-10-consumer-tags")


def test_feature_3_the_header_search_box_finds_from_any_page(ui, sample):
    box = ui.get_by_role("search").locator("input[name=find]")

    def search(text, lands_on):
        box.fill(text)
        box.press("Enter")
        ui.wait_for_url(re.compile(lands_on))

    ui.goto("/ui/capacity/")
    search("numa1", re.escape(f"/ui/providers/{sample['numa1'].uuid}/"))
    assert "cn1-numa1" in ui.locator("h1").inner_text()
    search(sample["cn2"].uuid, re.escape(f"/ui/providers/{sample['cn2'].uuid}/"))
    search(sample["vm2"].uuid[:8], re.escape(f"/ui/consumers/{sample['vm2'].uuid}/"))
    search("X86_AVX2", r"/ui/providers/\?required=HW_CPU_X86_AVX2$")
    assert "cn1" in ui.locator("main").inner_text()
    search(AGG, r"/ui/providers/\?member_of=" + AGG + "$")
    # several matches are listed, each a link
    search("cn", r"/ui/search/\?find=cn$")
    found = ui.locator("table.search-results a").all_inner_texts()
    assert {"cn1", "cn1-numa0", "cn1-numa1", "cn2"} <= set(found)
    screenshot(ui, "round-five-feature-3-search")
    ui.locator("table.search-results a", has_text="cn1-numa0").click()
    ui.wait_for_url(re.compile(re.escape(f"/ui/providers/{sample['numa0'].uuid}/")))
    search("no-such-thing", r"/ui/search/\?find=no-such-thing$")
    assert "Nothing is named or numbered “no-such-thing”" in ui.locator("main").inner_text()
