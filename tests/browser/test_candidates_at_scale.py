"""The candidates pages in a real browser on a cloud of 3,000 providers (issue 35): "why
not?" with every reason, a summary by reason, the excluded trees only and part of a host
name; neither page wider than the window at 1440 or 800 px."""
import re

from tests.browser.conftest import screenshot
from tests.bigcloud import SHARED_AGG
from tests.browser.scale import check_widths, cloud  # noqa: F401 (cloud: a fixture)


def test_why_not_at_scale(ui, cloud):
    ui.goto("/ui/candidates/why-not/")
    ui.fill("input[name=q]", "resources=VCPU:1,MEMORY_MB:16384&required=HW_CPU_X86_AVX2")
    ui.fill("input[name=tree]", "cmp-00")
    ui.check("input[name=excluded]")
    ui.click("form.card button[type=submit]")
    ui.wait_for_url(re.compile(r"excluded=on"))
    assert "trees 1–20 of 100 with a provider matching “cmp-00”" in ui.locator(
        "#why-not-count").inner_text()
    summary = ui.locator("#reason-summary tbody tr").all_inner_texts()
    assert "missing trait HW_CPU_X86_AVX2\t10\t10" in summary
    assert ui.locator("#page-trees .tree-card").count() == 12
    host = ui.locator("#page-trees .tree-card", has_text="cmp-0000.dc1.example.net")
    reasons = host.locator("td ul.reasons li").all_inner_texts()
    assert any(r.startswith("resources: MEMORY_MB: needs 16384, free") for r in reasons), reasons
    assert "resources: missing trait HW_CPU_X86_AVX2" in reasons
    check_widths(ui, "why-not")

    ui.set_viewport_size({"width": 1440, "height": 900})
    ui.locator(".pager >> text=next →").first.click()
    ui.wait_for_url(re.compile(r"page=2"))
    assert "trees 21–40 of 100" in ui.locator("#why-not-count").inner_text()
    screenshot(ui, "why-not-page-2")


def test_candidates_from_a_flavor_at_scale(ui, cloud):
    ui.goto("/ui/candidates/")
    ui.fill("#flavor-form input[name=vcpus]", "4")
    ui.fill("#flavor-form input[name=ram]", "16")
    ui.fill("#flavor-form input[name=required]", "HW_CPU_X86_AVX2")
    ui.click("#flavor-groups summary")
    ui.fill("#flavor-form input[name=group-0-suffix]", "disk")
    ui.fill("#flavor-form input[name=group-0-resources]", "DISK_GB:x")
    ui.fill("#flavor-form input[name=group-0-aggregates]", SHARED_AGG)
    ui.click("#flavor-form button")
    assert "Requested resource DISK_GB expected positive integer amount. Got: x." in \
        ui.locator("#flavor-groups .errorlist").inner_text()
    ui.fill("#flavor-form input[name=group-0-resources]", "DISK_GB:20")
    ui.click("#flavor-form button")
    ui.wait_for_url(re.compile(r"q=resources%3DVCPU%3A4%2CMEMORY_MB%3A16384"))
    assert ui.locator("#query-form input[name=q]").input_value() == (
        "resources=VCPU:4,MEMORY_MB:16384&required=HW_CPU_X86_AVX2"
        f"&resourcesdisk=DISK_GB:20&member_ofdisk=in:{SHARED_AGG}")
    assert re.match(r"\d[\d,]* allocation requests? in \d[\d,]* trees?", ui.locator("h2").first.inner_text())
    first = ui.locator("table .left").first.inner_text()
    assert re.fullmatch(r"[\d,]+ left", first.strip()), first
    check_widths(ui, "candidates-flavor")


def test_a_query_too_long_for_a_url_is_explained_and_answered(ui, cloud):
    # 20 KB (forbidden aggregates no host is in): a request line the front door refuses
    aggregates = ",".join(f"f0000000-0000-0000-0000-{index:012d}" for index in range(545))
    query = f"resources=VCPU:4,MEMORY_MB:16384&member_of=!in:{aggregates}"
    ui.goto("/ui/candidates/")
    ui.fill("#query-form input[name=q]", query)
    ui.click("#query-form button")
    notice = ui.locator("#long-query").inner_text()
    assert f"This query is {len(query):,} bytes long." in notice
    assert "over the front door's limit of 8,190" in notice
    assert "A client must shorten it" in notice
    assert ui.url.endswith("/ui/candidates/")   # answered from the post
    assert ui.locator("#query-form input[name=q]").input_value() == query
    count = ui.locator("main h2").first.inner_text()
    assert re.match(r"[\d,]+ allocation requests in [\d,]+ trees · 1–50", count), count
    check_widths(ui, "candidates-long-query")

    ui.locator(".pager button", has_text="next →").first.click()
    ui.wait_for_selector("text=page 2 of")
    assert "· 51–100 on this page" in ui.locator("main h2").first.inner_text()
    ui.get_by_role("button", name=re.compile("Why not")).click()
    ui.wait_for_selector("#why-not-count")
    assert "This query is" in ui.locator("#long-query").inner_text()
    assert ui.locator("#page-trees .tree-card").count() == 20


def test_candidates_by_host_name_at_scale(ui, cloud):
    """Sorting by host name sorts the whole answer: the real hosts come on page 1, after
    the uuid-named trees that sort before them, and the order survives paging."""
    ui.goto("/ui/candidates/?q=resources%3DVCPU%3A1%2CMEMORY_MB%3A512&version=1.39")
    ui.select_option("#order-form select[name=order]", "name")
    ui.click("#order-form button")
    ui.wait_for_url(re.compile(r"order=name"))
    trees = ui.locator("tr.root th > a").all_inner_texts()
    assert "cmp-0000.dc1.example.net" in trees
    hosts = [name for name in trees if name.startswith("cmp-")]
    assert hosts == [f"cmp-{i:04d}.dc1.example.net" for i in range(len(hosts))]
    assert ui.locator("#order-form select[name=order]").input_value() == "name"
    assert "order=name" in ui.locator("#candidates-csv").get_attribute("href")
    check_widths(ui, "candidates-by-name")

    ui.locator(".pager >> text=next →").first.click()
    ui.wait_for_url(re.compile(r"page=2"))
    assert "order=name" in ui.url
    first = ui.locator("tr.root th > a").first.inner_text()
    assert first == f"cmp-{len(hosts):04d}.dc1.example.net"
