"""Rows that Placement tolerates in its own database but that cannot be imported as they are.

Dangling references (Placement keeps no foreign key on most of them), a root
that disagrees with the parent chain, broken trees. Over-capacity usage is only
reported: Placement allows it (an inventory lowered below its usage).
"""
from dataclasses import dataclass, field


@dataclass
class Problems:
    """What an import found. `skippable` rows are left out under --skip-invalid
    (a wrong root is replaced by the parent chain's); `fatal` ones stop any import."""

    skippable: list = field(default_factory=list)
    fatal: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # reported, never refused

    def skip(self, message):
        self.skippable.append(message)

    def refuse(self, message):
        self.fatal.append(message)

    def note(self, message):
        self.notes.append(message)

    def stops_import(self, skip_invalid):
        return bool(self.fatal) or (bool(self.skippable) and not skip_invalid)

    def lines(self, skip_invalid):
        verdict = "skipped" if skip_invalid else "invalid"
        return ([f"cannot import: {m}" for m in self.fatal]
                + [f"{verdict}: {m}" for m in self.skippable]
                + [f"note: {m}" for m in self.notes])


@dataclass
class TreeNode:
    root: int
    level: int
    lft: int = 0
    rght: int = 0
    tree_id: int = 0


def build_forest(skeleton, problems, uuids):
    """MPTT fields for every provider from (id, parent id, stored root id) rows.

    The parent chain is authoritative; a stored root that disagrees is reported.
    Providers whose chain ends at a missing parent or loops are fatal problems
    and left out. Children are numbered in id order; trees get tree_id 1.. in
    the order of their roots' ids. Returns {id: TreeNode}.
    """
    parent_of = {pk: parent for pk, parent, _ in skeleton}
    stored_root = {pk: root for pk, _, root in skeleton}
    children = {}
    for pk, parent, _ in skeleton:
        if parent is not None:
            children.setdefault(parent, []).append(pk)
    nodes, roots = {}, []
    for pk, parent, _ in skeleton:
        if parent is None:
            roots.append(pk)
        elif parent not in parent_of:
            problems.refuse(f"provider {uuids(pk)} has parent id {parent}, which does not exist")
    for tree_id, root in enumerate(sorted(roots), start=1):
        counter = 1
        nodes[root] = TreeNode(root=root, level=0, lft=counter, tree_id=tree_id)
        stack = [(root, iter(sorted(children.get(root, ()))))]
        while stack:
            pk, kids = stack[-1]
            kid = next(kids, None)
            if kid is None:
                counter += 1
                nodes[pk].rght = counter
                stack.pop()
                continue
            counter += 1
            nodes[kid] = TreeNode(root=root, level=nodes[pk].level + 1, lft=counter,
                                  tree_id=tree_id)
            stack.append((kid, iter(sorted(children.get(kid, ())))))
    for pk, _, _ in skeleton:
        if pk not in nodes and parent_of[pk] in parent_of:
            problems.refuse(f"provider {uuids(pk)} does not reach a root (a parent cycle "
                           "or a missing parent above it)")
    for pk, node in nodes.items():
        if stored_root[pk] != node.root:
            problems.skip(f"provider {uuids(pk)} has root id {stored_root[pk]}, its parent "
                          f"chain ends at {uuids(node.root)} (the parent chain's root is used)")
    return nodes
