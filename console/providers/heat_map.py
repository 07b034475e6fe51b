"""The capacity page's heat map: one cell per provider, coloured by its usage."""
from dataclasses import dataclass, field

# Heatmap colour steps: a cell's usage percentage falls in one of HEAT_STEPS
# buckets of equal width; usage beyond capacity has its own colour.
HEAT_STEPS = 10


@dataclass
class HeatCell:
    """One provider on the heatmap: its usage of one class, or its most used class."""

    uuid: str
    name: str
    percent: float = 0.0        # the highest used / capacity of the cell's classes
    over: bool = False          # some class is used beyond its capacity
    rows: list = field(default_factory=list)    # [InventoryUsage] by class name

    @property
    def step(self):
        """The colour step: 0..HEAT_STEPS, or "over" beyond capacity."""
        if self.over:
            return "over"
        return min(int(self.percent * HEAT_STEPS // 100), HEAT_STEPS)

    @property
    def top(self):
        """The InventoryUsage that decides the cell's step: a class over capacity
        first, then the most used one."""
        return max(self.rows, key=lambda row: (row.over_capacity, row.percent or 0.0))


def heat_cells(usages, resource_class=None):
    """[HeatCell] of the providers with inventory (of `resource_class`, when given), in
    the order of `usages`. Without a class a cell shows the provider's most used class."""
    cells = {}
    for row in usages:
        if resource_class is not None and row.resource_class != resource_class:
            continue
        cell = cells.get(row.provider_id)
        if cell is None:
            cell = cells[row.provider_id] = HeatCell(row.provider_uuid, row.provider_name)
        cell.rows.append(row)
        cell.over = cell.over or row.over_capacity
        # No capacity: over capacity when anything is used (flagged above), else unused.
        cell.percent = max(cell.percent, row.percent or 0.0)
    return list(cells.values())


