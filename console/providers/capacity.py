"""The whole-cloud capacity page of the operator UI (/ui/capacity/).

Per resource class: providers, total, reserved, capacity, used, free and the
part held beyond the physical amount (over-committed), with the providers used
beyond capacity flagged; and a heatmap of every provider by usage (of one class,
or of its most used class), pure HTML/CSS. Three queries whatever the size of
the cloud (session, user, the inventories with their usage): every number is
computed from one read with providers.rules' capacity formula
(allocations.usage, console.providers.heat_map).

The map is not colour alone: each cell's accessible name says the provider and
its numbers (shown under the map on hover and keyboard focus), a cell over
capacity carries a "!" as well as stripes, the legend says each step in words,
and a table of the same providers, sorted and paged, follows the map.
"""
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.contrib import messages
from django.shortcuts import render
from django.utils.html import conditional_escape
from django.views.decorators.http import require_GET

from console.door import LIST_PROVIDERS, door
from allocations import usage
from console.providers.heat_map import HEAT_STEPS, heat_cells
from console.links import row_url
from console.numbers import number, percent
from console.providers.tree_layout import usage_bar

TABLE_ROWS = 50
# A page of the heat map ("map" pages) holds at most HEAT_CELLS cells and HEAT_BYTES of
# their HTML: long names, or many classes a provider, make fewer cells a page, so that
# the whole page stays under 200 KiB.
HEAT_CELLS = 800
HEAT_BYTES = 120 * 1024
CELL_MARKUP = 110   # a cell's HTML besides its label: the link, the class, tabindex
# the table's orders: (value of ?sort=, what a column header says it does)
TABLE_SORTS = {"-usage": "fullest first", "usage": "emptiest first", "name": "by name"}
OVER_CAPACITY = "over capacity"


def _cell_label(cell):
    """A cell's accessible name: the provider and each class's usage, in words."""
    parts = [f"{row.resource_class} {number(row.used)} of {number(row.usable)} used"
             + (f" ({percent(row.percent)})" if row.percent is not None else "")
             for row in cell.rows]
    flag = f", {OVER_CAPACITY}" if cell.over else ""
    return f"{cell.name}: {', '.join(parts)}{flag}"


class MapPage:
    """One page of the heat map's cells (_map_page): its number, its slice, and what
    the pager says."""

    def __init__(self, number, starts, count):
        self.number, self.pages, self.count = number, len(starts), count
        self.start = starts[number - 1]
        self.end = starts[number] if number < len(starts) else count
        self.has_previous, self.has_next = number > 1, number < len(starts)
        self.previous_page_number, self.next_page_number = number - 1, number + 1
        self.start_index, self.end_index = self.start + 1, self.end


def _map_page(labels, asked):
    """The heat map's page `asked` (a page number as given; a bad or missing one is the
    first, one past the end the last) of cells whose escaped labels are `labels`: the
    cells are cut into pages of at most HEAT_CELLS cells and HEAT_BYTES of HTML."""
    starts, size = [0], 0
    for index, label in enumerate(labels):
        cost = CELL_MARKUP + len(label.encode())
        if index > starts[-1] and (index - starts[-1] == HEAT_CELLS
                                   or size + cost > HEAT_BYTES):
            starts.append(index)
            size = 0
        size += cost
    try:
        number = int(asked)
    except (TypeError, ValueError):
        number = 1
    return MapPage(max(1, min(number, len(starts))), starts, len(labels))


def _heat_css(step):
    return "h-over" if step == "over" else f"h{step}"


def _legend():
    """[(css, words)] for each colour step, then over capacity."""
    width = 100 // HEAT_STEPS
    steps = [(_heat_css(step), f"{step * width}–{(step + 1) * width}%")
             for step in range(HEAT_STEPS)]
    return steps + [(_heat_css(HEAT_STEPS), "100% (full)"),
                    (_heat_css("over"), OVER_CAPACITY)]


def _sorted(cells, sort):
    """The cells in the table's order: by usage (a cell over capacity counts as the
    fullest), then by name; or by name alone."""
    if sort == "name":
        return cells     # the selector's order
    if sort == "usage":
        return sorted(cells, key=lambda cell: (cell.over, cell.percent))
    return sorted(cells, key=lambda cell: (not cell.over, -cell.percent))


def _table(request, cells, chosen):
    """The table of the same providers: a page of rows, the sort and page links."""
    sort = request.GET.get("sort")
    if sort not in TABLE_SORTS:
        sort = "-usage"
    page = Paginator(_sorted(cells, sort), TABLE_ROWS).get_page(request.GET.get("page"))
    rows = []
    for cell in page.object_list:
        full = cell.step == HEAT_STEPS
        rows.append({"cell": cell, "row": cell.top, "css": _heat_css(cell.step),
                     "percent": percent(cell.top.percent),
                     "state": OVER_CAPACITY if cell.over else "full" if full else ""})
    kept = [("rc", chosen)] if chosen else []
    return {
        "rows": rows, "page": page, "sort": sort, "sort_words": TABLE_SORTS[sort],
        "page_query": urlencode(kept + [("sort", sort)]),
        "by_name": urlencode(kept + [("sort", "name")]),
        "by_usage": urlencode(kept + [("sort", "usage" if sort == "-usage" else "-usage")]),
    }


@door(read=LIST_PROVIDERS)
@require_GET
def capacity(request):
    usages = usage.inventory_usages()
    classes = usage.capacity_by_class(usages)
    names = [c.resource_class for c in classes]
    chosen = request.GET.get("rc") or None
    if chosen not in names:
        if chosen is not None:   # said, not ignored: the page shows every class then
            messages.warning(request, f"No provider has {chosen} inventory: the map shows "
                                      "every class.")
        chosen = None
    cells = heat_cells(usages, chosen)
    labels = [conditional_escape(_cell_label(cell)) for cell in cells]
    heat_page = _map_page(labels, request.GET.get("map"))
    return render(request, "ui/capacity.html", {
        "classes": [{"row": c, "bar": usage_bar(c.resource_class, c.used, c.capacity)}
                    for c in classes],
        "class_names": names,
        "chosen": chosen,
        "cells": cells,
        "heat_page": heat_page,
        "heatmap": [(cell.uuid, _heat_css(cell.step), label) for cell, label in zip(
            cells[heat_page.start:heat_page.end], labels[heat_page.start:heat_page.end])],
        "heat_query": urlencode([("rc", chosen)] if chosen else []),
        "legend": _legend(),
        "over_cells": sum(cell.over for cell in cells),
        "table": _table(request, cells, chosen),
        "over": [row for row in usages if row.over_capacity],
        "provider_url": row_url("ui:provider"),
    })
