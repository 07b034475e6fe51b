"""The whole-cloud capacity page of the operator UI (/ui/capacity/).

Per resource class: providers, total, reserved, capacity, used, free and the
part held beyond the physical amount (over-committed), with the providers used
beyond capacity flagged; and a heatmap of every provider by usage (of one class,
or of its most used class), pure HTML/CSS. Three queries whatever the size of
the cloud (session, user, the inventories with their usage): every number is
computed from one read with providers.rules' capacity formula
(providers.selectors.capacity).
"""
from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from providers.selectors import capacity as selectors
from providers.ui.tree_layout import usage_bar


def _cell_title(cell):
    """The tooltip of a heatmap cell: the provider and each class's usage."""
    parts = [f"{rc} {used}/{usable}" + (f" ({pct:.0f}%)" if pct is not None else "")
             for rc, used, usable, pct in cell.details]
    flag = " — over capacity" if cell.over else ""
    return f"{cell.name}: {', '.join(parts)}{flag}"


def _heat_css(step):
    return "h-over" if step == "over" else f"h{step}"


@staff_member_required
@require_GET
def capacity(request):
    usages = selectors.inventory_usages()
    classes = selectors.capacity_by_class(usages)
    names = [c.resource_class for c in classes]
    chosen = request.GET.get("rc") or None
    if chosen not in names:
        chosen = None
    cells = selectors.heat_cells(usages, chosen)
    provider_base = reverse("ui:provider", args=["-"])[:-2]  # one reverse(), not one per cell
    return render(request, "ui/capacity.html", {
        "classes": [{"row": c, "bar": usage_bar(c.resource_class, c.used, c.capacity)}
                    for c in classes],
        "class_names": names,
        "chosen": chosen,
        "cells": cells,
        "heatmap": [(cell.uuid, _heat_css(cell.step), _cell_title(cell)) for cell in cells],
        "steps": [(_heat_css(step), step * 100 // selectors.HEAT_STEPS)
                  for step in range(selectors.HEAT_STEPS + 1)],
        "over": [row for row in usages if row.over_capacity],
        "provider_base": provider_base,
    })
