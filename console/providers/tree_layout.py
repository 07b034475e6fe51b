"""Lay out provider trees and usage bars for the operator UI: pure functions, no database.

A page shows whole trees as nested, collapsible subtrees (<details>): each
provider with children is a <details> whose <summary> is its row, its
children inside. The layout is a flat list of entries the template walks
once (no recursive includes, so a page of hundreds of rows renders quickly):

    {"kind": "node", ...}  one provider's row; a provider with children opens
                           a subtree (has_kids) that a later "close" ends
    {"kind": "more", ...}  where rendering stopped: the remaining children of
                           `parent` from index `start`, fetched on demand
    {"kind": "close"}      ends the innermost open subtree

Big trees load progressively: a page renders at most PAGE_BUDGET providers, and
about PAGE_BYTES of their rows' HTML (row_bytes: long names, many traits or classes
make fewer rows), and a tree at most CHUNK; where a budget runs out a "more" entry
stands for the rest (a link to the subtree page; static/ui/providers.js fetches it as an
HTML fragment when it scrolls into view). When the list is filtered, matching
providers are marked, subtrees holding a match are open and the others are
closed with their children left to load when opened.

Subtree totals: for every provider with children, capacity and usage per
resource class summed over the provider and all its descendants.
"""
import os
from collections import defaultdict

from console.sorting import name_order
from providers.rules import reported_capacity
from console.numbers import number, percent, size

CHUNK = 50          # providers rendered per tree, and per fetched fragment
BIG_TREE = CHUNK    # unfiltered, a tree of more providers starts closed: its root row and
                    # totals, its rows loaded when opened (a first page shows the cloud)
PAGE_BUDGET = 200   # providers rendered on one page before trees show only their roots
PAGE_BYTES = 160 * 1024   # and about this much of their rows' HTML: the page < 200 KiB

# What _tree_rows.html writes around a row's names, bars and tags (row_bytes)
ROW_MARKUP, ROOT_MARKUP, PARENT_MARKUP = 500, 150, 110
BAR_MARKUP, TOTAL_MARKUP, TAG_MARKUP = 100, 150, 120


def usage_bar(rc, used, capacity):
    """One usage bar: {rc, used, capacity, width (0-100, for CSS), css, pct (exact or None),
    label "used / capacity", title (with the percentage and sizes)}: the strings are
    made here once (console.numbers), so that rows render without per-number
    template filters."""
    if capacity <= 0:
        width, css, pct = (100 if used else 0), ("over" if used else ""), None
        title = f"{number(used)} of {number(capacity)}"
    else:
        pct = used * 100.0 / capacity
        css = "over" if pct > 100 else "high" if pct >= 85 else ""
        width = min(pct, 100.0)
        title = f"{number(used)} of {number(capacity)} ({percent(pct)})"
    if size(rc, capacity):
        title += f" · {size(rc, used) or number(used)} of {size(rc, capacity)}"
    return {"rc": rc, "used": used, "capacity": capacity, "width": f"{width:.1f}",
            "css": css, "pct": pct, "label": f"{number(used)} / {number(capacity)}",
            "title": title}


def usage_row(inv, used):
    """One inventory's usage bar: {inv, rc, used, capacity, width, css, pct}.

    `inv` has its resource_class loaded; shared with the dashboard (console.overview).
    """
    cap = reported_capacity(inv.total, inv.reserved, inv.allocation_ratio)
    return {"inv": inv, **usage_bar(inv.resource_class.name, used, cap)}


SEPARATORS = ".-_:/ "
MIN_PREFIX = 6      # a shorter shared prefix is left in the names


def short_names(names, parent_name):
    """What tells each of `names` (siblings) from the others: the name without the
    prefix they all share (or that is their parent's name), cut after a separator,
    as "…rest"; '' where nothing is worth leaving out."""
    if len(names) > 1:
        prefix = os.path.commonprefix(names)
    else:
        prefix = parent_name if names[0].startswith(parent_name) else ""
        prefix = names[0][:len(prefix) + 1]   # with the separator after it, if one follows
    cut = max(prefix.rfind(sep) for sep in SEPARATORS) + 1
    if cut < MIN_PREFIX:
        return [""] * len(names)
    return [f"…{name[cut:]}" if name[cut:] else "" for name in names]


class Forest:
    """Loaded providers (whole trees, or one provider's whole subtree) and what the
    layout needs of each, computed once bottom-up.

    nodes: dicts with id, parent_id, level ... in tree order (a parent before its
    children, siblings in order); usage: {id: [(class, used, capacity)]};
    traits, aggregates: {id: [names]}; matches: ids the filters keep, or None
    when nothing is filtered.
    """

    def __init__(self, nodes, usage, traits=None, aggregates=None, matches=None):
        self.nodes = {node["id"]: node for node in nodes}
        self.usage, self.matches = usage, matches
        self.traits, self.aggregates = traits or {}, aggregates or {}
        self.children = defaultdict(list)
        for node in nodes:
            if node["parent_id"] in self.nodes:
                self.children[node["parent_id"]].append(node)
        self.short = {}   # {id: the part of the name that tells it from its siblings}
        for parent_id, kids in self.children.items():
            kids.sort(key=lambda kid: (name_order(kid["name"]), kid["id"]))
            self.short.update(zip((kid["id"] for kid in kids), short_names(
                [kid["name"] for kid in kids], self.nodes[parent_id]["name"])))
        self.size, self.totals, self.holds_match = {}, {}, {}
        sums = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        for node in reversed(nodes):   # children before their parent
            node_id, parent_id = node["id"], node["parent_id"]
            own = sums[node_id]
            for rc, used, capacity in usage.get(node_id, ()):
                own[rc][0] += used
                own[rc][1] += capacity
            self.size[node_id] = self.size.get(node_id, 0) + 1
            self.holds_match[node_id] = (self.holds_match.get(node_id, False)
                                         or (matches is not None and node_id in matches))
            if node_id in self.children:
                self.totals[node_id] = [usage_bar(rc, used, capacity) for rc, (used, capacity)
                                        in sorted(own.items())]
            if parent_id in self.nodes:
                self.size[parent_id] = self.size.get(parent_id, 0) + self.size[node_id]
                self.holds_match[parent_id] = (self.holds_match.get(parent_id, False)
                                               or self.holds_match[node_id])
                into = sums[parent_id]
                for rc, (used, capacity) in own.items():
                    into[rc][0] += used
                    into[rc][1] += capacity
            del sums[node_id]

    def row(self, node):
        """The template's facts of one provider row (display strings made here: a
        page renders hundreds of rows, and each template lookup costs)."""
        node_id, level = node["id"], node["level"]
        siblings = self.children.get(node["parent_id"])
        match = self.matches is not None and node_id in self.matches
        if level == 0:
            branch = ""
        else:
            branch = "└" if siblings and siblings[-1]["id"] == node_id else "├"
        return {
            "kind": "node", "node": node,
            "has_kids": node_id in self.children,
            "size": self.size[node_id],
            "branch": branch,
            "css": "row" + (" match" if match else "") + ("" if level else " tree"),
            "level": str(level),
            "generation": str(node["generation"]),
            "short": self.short.get(node_id, ""),
            "inventories": [usage_bar(*row) for row in self.usage.get(node_id, ())],
            "totals": self.totals.get(node_id),
            "traits": self.traits.get(node_id, ()),
            "aggregates": self.aggregates.get(node_id, ()),
            "match": match,
        }

    def remaining(self, parent_id, start):
        """How many providers the children of `parent_id` from `start` hold, subtrees included."""
        return sum(self.size[child["id"]] for child in self.children[parent_id][start:])


def row_bytes(entry):
    """About how many bytes of HTML _tree_rows.html makes of one row entry."""
    node, name = entry["node"], len(entry["node"]["name"])
    found = ROW_MARKUP + (3 if entry["short"] else 2) * name + len(entry["short"])
    if node["level"] == 0:
        found += ROOT_MARKUP
    if entry["has_kids"]:
        found += PARENT_MARKUP
    for markup, bars in ((BAR_MARKUP, entry["inventories"]), (TOTAL_MARKUP, entry["totals"] or ())):
        found += sum(markup + 2 * len(bar["rc"]) + len(bar["title"]) + len(bar["label"])
                     for bar in bars)
    return found + sum(TAG_MARKUP + 3 * len(tag)
                       for tag in (*entry["traits"], *entry["aggregates"]))


class _Layout:
    def __init__(self, forest, budget, bytes_left=PAGE_BYTES):
        self.forest, self.budget, self.entries = forest, budget, []
        self.bytes_left = bytes_left

    def node(self, node):
        forest = self.forest
        entry = forest.row(node)
        self.entries.append(entry)
        self.budget -= 1
        self.bytes_left -= row_bytes(entry)
        if not entry["has_kids"]:
            return
        # Filtered: a subtree without a match stays closed and loads when opened.
        # Unfiltered: a big tree stays closed, so that one device tree of hundreds of
        # rows does not fill the page.
        if forest.matches is not None:
            entry["open"] = forest.holds_match[node["id"]]
        else:
            entry["open"] = node["level"] > 0 or forest.size[node["id"]] <= BIG_TREE
        if entry["open"]:
            self.children(node, 0)
        else:
            self.more(node, 0)
        self.entries.append({"kind": "close"})

    def children(self, parent, start):
        kids = self.forest.children[parent["id"]]
        for index in range(start, len(kids)):
            if self.budget <= 0 or self.bytes_left <= 0:
                self.more(parent, index)
                return
            self.node(kids[index])

    def more(self, parent, start):
        self.entries.append({"kind": "more", "parent": parent, "start": str(start),
                             "level": str(parent["level"] + 1),
                             "count": self.forest.remaining(parent["id"], start)})


def layout_trees(forest, roots, page_budget=PAGE_BUDGET, chunk=CHUNK, page_bytes=PAGE_BYTES):
    """Entries for whole trees (`roots`: their root nodes, in page order).

    Each tree renders up to `chunk` providers while the page has budget left (rows
    and bytes); once it is spent, a tree shows its root row and a "more" entry.
    """
    entries = []
    for root in roots:
        tree_budget = max(1, min(chunk, page_budget)) if page_bytes > 0 else 1
        layout = _Layout(forest, tree_budget, page_bytes)
        layout.node(root)
        page_budget -= tree_budget - layout.budget
        page_bytes = layout.bytes_left
        entries.extend(layout.entries)
    return entries


def layout_children(forest, parent, start, chunk=CHUNK):
    """Entries for the children of `parent` from index `start` (a fetched fragment)."""
    layout = _Layout(forest, chunk)
    layout.children(parent, start)
    return layout.entries
