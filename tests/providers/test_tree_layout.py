"""console.providers.tree_layout without a database: subtree totals, budgets and "more"
entries, folded subtrees when filtering, usage bars."""
from console.providers.tree_layout import Forest, layout_children, layout_trees, usage_bar


def node(id, parent=None, level=0, name=None):
    return {"id": id, "parent_id": parent, "level": level, "name": name or f"p{id}",
            "uuid": f"uuid-{id}", "generation": 0}


# r(1) ── a(2) ── a1(3), a2(4)
#      └─ b(5) ── b1(6) ── b1x(7)
TREE = [node(1), node(2, 1, 1), node(3, 2, 2), node(4, 2, 2), node(5, 1, 1), node(6, 5, 2),
        node(7, 6, 3)]
USAGE = {1: [("MEMORY_MB", 100, 1000)], 3: [("VCPU", 2, 4)], 4: [("VCPU", 4, 4)],
         7: [("VCPU", 1, 8), ("CUSTOM_X", 3, 2)]}


def shape(entries):
    """Entries as short strings: names for rows, +/- for open/close, [..] for "more"."""
    out = []
    for e in entries:
        if e["kind"] == "node":
            out.append(e["node"]["name"] + ("{" if e["has_kids"] and e["open"] else
                                            "{closed" if e["has_kids"] else ""))
        elif e["kind"] == "more":
            out.append(f"[{e['parent']['name']}@{e['start']}:{e['count']}]")
        else:
            out.append("}")
    return out


def test_subtree_totals_and_sizes():
    forest = Forest(TREE, USAGE)
    assert forest.size == {1: 7, 2: 3, 3: 1, 4: 1, 5: 3, 6: 2, 7: 1}
    totals = {rp: [(b["rc"], b["used"], b["capacity"]) for b in bars]
              for rp, bars in forest.totals.items()}
    assert totals == {
        1: [("CUSTOM_X", 3, 2), ("MEMORY_MB", 100, 1000), ("VCPU", 7, 16)],
        2: [("VCPU", 6, 8)],
        5: [("CUSTOM_X", 3, 2), ("VCPU", 1, 8)],
        6: [("CUSTOM_X", 3, 2), ("VCPU", 1, 8)],
    }
    assert forest.totals[1][0]["css"] == "over"   # a subtree can be over capacity too


def test_whole_tree_within_budget():
    forest = Forest(TREE, USAGE)
    entries = layout_trees(forest, [forest.nodes[1]])
    assert shape(entries) == ["p1{", "p2{", "p3", "p4", "}", "p5{", "p6{", "p7", "}", "}", "}"]
    rows = {e["node"]["name"]: e for e in entries if e["kind"] == "node"}
    assert [rows[n]["branch"] for n in ("p1", "p2", "p3", "p4", "p5")] == ["", "├", "├", "└", "└"]
    assert rows["p1"]["css"] == "row tree" and rows["p3"]["css"] == "row"


def test_budget_leaves_more_entries_per_open_level():
    forest = Forest(TREE, USAGE)
    entries = layout_trees(forest, [forest.nodes[1]], chunk=3)
    assert shape(entries) == ["p1{", "p2{", "p3", "[p2@1:1]", "}", "[p1@1:3]", "}"]
    # what the "more" entries stand for, fetched later
    assert shape(layout_children(forest, forest.nodes[2], 1, chunk=3)) == ["p4"]
    assert shape(layout_children(forest, forest.nodes[1], 1, chunk=2)) == [
        "p5{", "p6{", "[p6@0:1]", "}", "}"]


def test_page_budget_spreads_over_trees_then_shows_roots_only():
    forest = Forest([*TREE, node(8), node(9, 8, 1), node(10)], USAGE)
    roots = [forest.nodes[1], forest.nodes[8], forest.nodes[10]]
    entries = layout_trees(forest, roots, page_budget=7, chunk=5)
    assert shape(entries) == [
        "p1{", "p2{", "p3", "p4", "}", "p5{", "[p5@0:2]", "}", "}",   # 5 rows
        "p8{", "p9", "}",                                            # 2 more: budget spent
        "p10",                                                       # still its root row
    ]


def test_filtering_marks_matches_and_folds_subtrees_without_one():
    forest = Forest(TREE, USAGE, matches={4})
    entries = layout_trees(forest, [forest.nodes[1]])
    assert shape(entries) == ["p1{", "p2{", "p3", "p4", "}", "p5{closed", "[p5@0:2]", "}", "}"]
    assert [e["node"]["name"] for e in entries if e.get("match")] == ["p4"]
    assert next(e for e in entries if e.get("match"))["css"] == "row match"


def test_a_fragment_of_a_folded_subtree_stays_folded_below():
    forest = Forest(TREE, USAGE, matches={4})
    assert shape(layout_children(forest, forest.nodes[5], 0)) == [
        "p6{closed", "[p6@0:1]", "}"]


def test_usage_bar():
    assert usage_bar("VCPU", 3, 4) == {
        "rc": "VCPU", "used": 3, "capacity": 4, "width": "75.0", "css": "", "pct": 75.0,
        "label": "3 / 4", "title": "3 of 4 (75.0%)"}
    assert usage_bar("VCPU", 4, 4)["css"] == "high"
    over = usage_bar("VCPU", 6, 4)
    assert (over["css"], over["width"]) == ("over", "100.0")
    none = usage_bar("VCPU", 2, 0)   # usage without capacity
    assert (none["css"], none["width"], none["pct"], none["title"]) == ("over", "100.0", None,
                                                                        "2 of 0")
    assert usage_bar("VCPU", 0, 0)["css"] == ""


def test_usage_bar_numbers_are_grouped_and_sizes_named():
    memory = usage_bar("MEMORY_MB", 1536, 87539712)
    assert memory["label"] == "1,536 / 87,539,712"
    assert memory["title"] == "1,536 of 87,539,712 (0.0%) · 1.5 GiB of 83.5 TiB"
    huge = usage_bar("VCPU", 3, 340282346638528859811704183484516925440)   # ratio 3.4e38
    assert huge["label"] == "3 / 3.4e38"


def test_siblings_show_what_tells_them_apart():
    from console.sorting import name_order
    from console.providers.tree_layout import short_names

    parent = "net-agent-big.dc1.example.net"
    assert short_names([f"{parent}-ens0f1", f"{parent}-ens1f3"], parent) == ["…ens0f1", "…ens1f3"]
    assert short_names([f"{parent}-ens0f1"], parent) == ["…ens0f1"]      # an only child
    assert short_names(["cn1-numa0", "cn1-numa1"], "cn1") == ["", ""]   # little to leave out
    assert short_names(["alpha", "beta"], "root") == ["", ""]
    assert sorted(["ens10f0", "ens2f1", "ens0f1", "ens0f0"], key=name_order) == [
        "ens0f0", "ens0f1", "ens2f1", "ens10f0"]
