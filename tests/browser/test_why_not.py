"""In a real browser: the "why not?" explainer and a paged candidates answer."""
import re

from tests.browser.conftest import screenshot
from tests.factories import allocate, make_consumer, make_provider

AGG = "a0000000-0000-0000-0000-00000000000a"


def _cloud():
    """cn1 (two NUMA nodes, one busy, AVX2 on one), cn2 flat, a sharing disk."""
    cn1 = make_provider("cn1", inventory={"MEMORY_MB": 4096}, aggregates=[AGG])
    numa0 = make_provider("cn1-numa0", parent=cn1, inventory={"VCPU": 8},
                          traits=["HW_CPU_X86_AVX2"])
    make_provider("cn1-numa1", parent=cn1, inventory={"VCPU": {"total": 8, "max_unit": 4}})
    make_provider("cn2", inventory={"VCPU": 16, "MEMORY_MB": 8192})
    make_provider("shared-disk", inventory={"DISK_GB": 500},
                  traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[AGG])
    allocate(make_consumer(), numa0, VCPU=6)


def test_why_not_explains_an_empty_answer(ui):
    _cloud()
    ui.goto("/ui/candidates/?q=resources%3DVCPU%3A6%26required%3DHW_CPU_X86_AVX2&version=1.39")
    assert "0 allocation requests" in ui.locator("main h2").first.inner_text()
    ui.get_by_role("link", name=re.compile("Why not")).click()
    ui.wait_for_url(re.compile(r"/ui/candidates/why-not/\?"))
    assert ui.locator("#id_q").input_value() == "resources=VCPU:6&required=HW_CPU_X86_AVX2"

    cards = ui.locator("#page-trees section.tree-card")
    assert cards.count() == 3
    cn1 = ui.locator("#page-trees section.tree-card", has_text="cn1-numa0")
    assert cn1.locator(".verdict").inner_text() == "excluded"
    text = cn1.inner_text()
    assert "VCPU: needs 6, free 2 (capacity 8, used 6)" in text
    assert "VCPU: max_unit 4 < 6" in text
    assert "VCPU:6: none of the 2 provider(s) with VCPU inventory can supply it" in text
    assert "missing trait HW_CPU_X86_AVX2: no provider able to supply the group (cn2)" in \
        ui.locator("#page-trees section.tree-card", has_text="cn2").inner_text()
    screenshot(ui, "why_not_empty_answer")

    # one tree, then the same explanation as JSON
    ui.fill("#id_tree", "cn1-numa1")
    ui.click("form.card button[type=submit]")
    ui.wait_for_url(re.compile(r"tree=cn1-numa1"))
    assert ui.locator("#page-trees section.tree-card").count() == 1
    ui.get_by_role("link", name="as JSON").click()
    document = ui.locator("body").inner_text()
    assert '"kind": "max_unit"' in document or '"kind":"max_unit"' in document


def test_why_not_shows_a_refusal(ui):
    ui.goto("/ui/candidates/why-not/")
    ui.fill("#id_q", "resources=VCPU:1&required=HW_CPU_X86_AVX2")
    ui.select_option("#id_version", "1.10")
    ui.click("form.card button[type=submit]")
    box = ui.locator(".error-box")
    assert "400 Bad Request" in box.inner_text()
    assert "'required' was unexpected" in box.inner_text()
    assert "Failed validating" not in box.inner_text()


def test_a_large_answer_is_paged_by_tree(ui):
    for index in range(28):
        root = make_provider(f"host{index:02}", inventory={"MEMORY_MB": 2048})
        for numa in range(2):
            make_provider(f"host{index:02}-numa{numa}", parent=root, inventory={"VCPU": 4})
    ui.goto("/ui/candidates/")
    ui.fill("#id_q", "resources=VCPU:1,MEMORY_MB:256")
    ui.click("#query-form button[type=submit]")
    heading = ui.locator("main h2").first.inner_text()
    assert heading.startswith("56 allocation requests in 28 trees")
    assert "1–50 on this page" in heading
    assert ui.locator("tr.root").count() == 25          # 25 trees of 2 candidates each
    assert ui.locator(".pager").first.inner_text().count("page 1 of 2") == 1
    height = ui.evaluate("document.body.scrollHeight")
    assert height < 20_000, height
    screenshot(ui, "candidates_paged_page1")
    ui.locator(".pager").first.get_by_role("link", name="2", exact=True).click()
    ui.wait_for_url(re.compile(r"page=2"))
    assert "51–56 on this page" in ui.locator("main h2").first.inner_text()
    rows = ui.locator("tr.root")
    assert rows.count() == 3 and "host25" in rows.first.inner_text()
    screenshot(ui, "candidates_paged_page2")


def test_why_not_answers_for_the_whole_cloud_first(ui):
    """Issue 43, item 3: counts per reason over every tree, the closest hosts, identical
    siblings folded; the flavor form keeps its values after "Write the query"."""
    for n in range(30):
        make_provider(f"host-{n:02}", inventory={"VCPU": 4, "MEMORY_MB": 8192})
    make_provider("host-big", inventory={"VCPU": 7, "MEMORY_MB": 8192})
    rack = make_provider("rack", inventory={"VCPU": 2})
    for n in range(8):
        make_provider(f"rack-sw{n}", parent=rack)
    ui.goto("/ui/candidates/")
    flavor = ui.locator("#flavor-form")
    flavor.get_by_label("VCPU", exact=True).fill("8")
    flavor.get_by_label("RAM", exact=True).fill("4")
    flavor.get_by_label("RAM unit").select_option("GB")
    flavor.get_by_role("button", name=re.compile("Write the query")).click()
    ui.wait_for_url(re.compile(r"/ui/candidates/\?"))
    flavor = ui.locator("#flavor-form")
    assert flavor.get_by_label("VCPU", exact=True).input_value() == "8"
    assert flavor.get_by_label("RAM unit").input_value() == "GB"
    ui.get_by_role("link", name=re.compile("Why not")).click()
    ui.wait_for_url(re.compile(r"/ui/candidates/why-not/\?"))
    cloud = ui.locator("#cloud-wide")
    assert "0 of 32 trees yield candidates" in cloud.inner_text()
    assert re.search(r"not enough free VCPU\s+32\b", ui.locator("#cloud-summary").inner_text())
    closest = ui.locator("#closest section.tree-card")
    assert closest.first.locator("h2 a").inner_text() == "host-big"     # 1 VCPU short
    screenshot(ui, "why-not-cloud-wide")
    ui.locator("#id_tree").fill("rack")
    ui.get_by_role("button", name="Explain").click()
    ui.wait_for_selector("section.tree-card")
    assert "(8 siblings, the same)" in ui.locator("#page-trees section.tree-card").first.inner_text()


def test_few_tabs_to_the_first_candidate(ui):
    """Issue 43, item 8: 37 Tabs to the first candidate; now the skip link goes there."""
    _cloud()
    ui.goto("/ui/candidates/?q=resources%3DVCPU%3A1&version=1.39")
    ui.keyboard.press("Tab")
    assert ui.evaluate("document.activeElement.textContent") == "Skip to the candidates"
    ui.keyboard.press("Enter")
    presses = 0
    while presses < 5:
        ui.keyboard.press("Tab")
        presses += 1
        if ui.evaluate("!!document.activeElement.closest('table tbody tr:not(.root)')"):
            break
    assert presses <= 3, presses    # the tree's link, then the first candidate's provider
