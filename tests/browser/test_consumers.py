"""An operator opens a consumer from a provider page, moves one of its allocations, and
reads the change log on the consumer's and the providers' pages (real browser)."""
import re
import uuid as uuidlib

import pytest

from placement_site.inprocess import PlacementClient
from tests.browser.conftest import screenshot

CONSUMER = "6a1f3c2e-9b8d-4e7f-a6c5-1d2e3f4a5b6c"


@pytest.fixture
def cloud(operator):
    """A compute node with two NUMA children and an instance on numa0, created through
    the API (so the change log starts with nova's writes)."""
    api = PlacementClient(version="latest", token="nova:service", roles=["admin"])
    uuids = {name: str(uuidlib.uuid4()) for name in ("cn1", "cn1-numa0", "cn1-numa1")}
    for name, parent in (("cn1", None), ("cn1-numa0", "cn1"), ("cn1-numa1", "cn1")):
        body = {"name": name, "uuid": uuids[name]}
        if parent:
            body["parent_provider_uuid"] = uuids[parent]
        assert api.post("/resource_providers", body).status == 200
    inventories = {"cn1": {"MEMORY_MB": {"total": 8192}},
                   "cn1-numa0": {"VCPU": {"total": 8}}, "cn1-numa1": {"VCPU": {"total": 8}}}
    for name, inventory in inventories.items():
        result = api.put(f"/resource_providers/{uuids[name]}/inventories",
                         {"resource_provider_generation": 0, "inventories": inventory})
        assert result.status == 200, result.body
    result = api.put(f"/allocations/{CONSUMER}", {
        "allocations": {uuids["cn1-numa0"]: {"resources": {"VCPU": 4}},
                        uuids["cn1"]: {"resources": {"MEMORY_MB": 2048}}},
        "project_id": "tenant-a", "user_id": "alice", "consumer_generation": None,
        "consumer_type": "INSTANCE"})
    assert result.status == 204, result.body
    return api, uuids


def log_rows(page):
    return page.locator("#change-log table.changes tbody tr")


def test_move_an_allocation_and_read_the_change_log(ui, cloud):
    api, uuids = cloud
    # from the provider page to the consumer
    ui.goto(f"/ui/providers/{uuids['cn1-numa0']}/")
    ui.click(f"text={CONSUMER}")
    ui.wait_for_url(re.compile(rf"/ui/consumers/{CONSUMER}/$"))
    allocations = ui.locator("#allocations tbody tr")
    assert allocations.count() == 2
    assert "tenant-a" in ui.locator("dl.kv").inner_text()
    assert ui.locator("#consumer-generation").inner_text() == "1"
    vcpu = ui.locator('#allocations tr[data-class="VCPU"]')
    assert "cn1-numa0" in vcpu.inner_text()
    screenshot(ui, "consumer-page")

    # move VCPU from numa0 to numa1, picked among the providers with room
    vcpu.locator("a", has_text="Move…").click()
    ui.wait_for_url(re.compile(r"/move-to\?"))
    target = ui.locator('#targets tr[data-provider="cn1-numa1"]')
    assert target.locator("td.num").all_inner_texts() == ["8", "0 / 8"]
    screenshot(ui, "consumer-move-picker")
    target.locator("button", has_text="Move here").click()
    ui.wait_for_url(re.compile(rf"/ui/consumers/{CONSUMER}/$"))
    assert ui.locator(".messages .success").inner_text() == (
        f"Moved VCPU=4 of consumer {CONSUMER} from cn1-numa0 to cn1-numa1.")
    assert "cn1-numa1" in ui.locator('#allocations tr[data-class="VCPU"]').inner_text()
    assert ui.locator("#consumer-generation").inner_text() == "2"

    # the consumer's change log: the move by the login, nova's creation before it
    rows = log_rows(ui)
    assert rows.count() == 2
    newest = rows.nth(0).inner_text()
    assert "ui:operator" in newest and "generation 1 → 2" in newest
    assert "cn1-numa0: VCPU=4 → nothing" in newest and "cn1-numa1: nothing → VCPU=4" in newest
    oldest = rows.nth(1).inner_text()
    assert "nova" in oldest and "service" in oldest and "new consumer" in oldest
    ui.locator("#change-log").scroll_into_view_if_needed()
    screenshot(ui, "consumer-moved-change-log")

    # the target provider's change log, filtered to the UI's writes
    ui.locator("#allocations").get_by_role("link", name="cn1-numa1").click()
    ui.wait_for_url(re.compile(rf"/ui/providers/{uuids['cn1-numa1']}/$"))
    rows = log_rows(ui)
    assert rows.count() == 3  # create, inventories (nova), the move (operator)
    assert f"consumer {CONSUMER}: nothing → VCPU=4" in rows.nth(0).inner_text()
    ui.fill("#id_log-actor", "ui:")
    ui.click("#change-log-filter button[type=submit]")
    ui.wait_for_url(re.compile(r"log-actor=ui%3A"))
    assert log_rows(ui).count() == 1
    assert "ui:operator" in log_rows(ui).nth(0).inner_text()
    screenshot(ui, "provider-change-log-filtered")

    # the source provider's log shows the consumer leaving it
    ui.goto(f"/ui/providers/{uuids['cn1-numa0']}/")
    ui.select_option("#id_log-action", "allocations")
    ui.click("#change-log-filter button[type=submit]")
    ui.wait_for_url(re.compile(r"log-action=allocations"))
    rows = log_rows(ui)
    assert rows.count() == 2
    assert f"consumer {CONSUMER}: VCPU=4 → nothing" in rows.nth(0).inner_text()
    screenshot(ui, "provider-change-log-source")


def test_a_concurrent_change_shows_a_conflict(ui, cloud):
    api, uuids = cloud
    ui.goto(f"/ui/consumers/{CONSUMER}/")
    ui.locator('#allocations tr[data-class="VCPU"]').locator("a", has_text="Move…").click()
    ui.wait_for_url(re.compile(r"/move-to\?"))
    # meanwhile nova resizes the instance
    result = api.put(f"/allocations/{CONSUMER}", {
        "allocations": {uuids["cn1-numa0"]: {"resources": {"VCPU": 2}}},
        "project_id": "tenant-a", "user_id": "alice", "consumer_generation": 1,
        "consumer_type": "INSTANCE"})
    assert result.status == 204, result.body
    ui.locator('#targets tr[data-provider="cn1-numa1"] button').click()
    ui.wait_for_url(re.compile(rf"/ui/consumers/{CONSUMER}/$"))
    error = ui.locator(".messages .error").inner_text()
    assert error.startswith(f"Not moved: consumer {CONSUMER} or one of its providers was "
                            "changed by someone else since this page was loaded")
    # the page now shows nova's state, and nothing moved
    assert ui.locator("#allocations tbody tr").count() == 1
    assert "cn1-numa0" in ui.locator('#allocations tr[data-class="VCPU"]').inner_text()
    screenshot(ui, "consumer-move-conflict")
