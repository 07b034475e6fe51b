"""The rows the sql/ functions return, by name.

Both are tuples: unpacked or indexed they read as before, and equal plain tuples of
the same values (a snapshot's rows and the database's compare equal).
"""
from typing import NamedTuple


class ProviderRow(NamedTuple):
    """A provider as trees.providers() reads it. tree_id, lft and rght (its MPTT
    position) are None when the caller did not ask for positions."""

    id: int
    uuid: str
    parent_id: int
    root_id: int
    tree_id: int
    lft: int
    rght: int


class InventoryKey(NamedTuple):
    """An inventory with its usage, all but its provider: capacity.inventory_groups()
    groups the providers whose inventories share one."""

    rc_id: int
    used: int
    total: int
    reserved: int
    allocation_ratio: float
    min_unit: int
    max_unit: int
    step_size: int
