"""Consistency check of the MPTT fields and root links of every provider."""
from providers.models import ResourceProvider


def assert_tree_integrity():
    """Nested sets, levels and roots agree with the parent links."""
    rows = {rp.pk: rp for rp in ResourceProvider.objects.all()}
    children = {}
    for rp in rows.values():
        children.setdefault(rp.parent_id, []).append(rp)
    for rp in rows.values():
        if rp.parent_id is None:
            assert rp.level == 0 and rp.root_id == rp.pk
            assert rp.lft == 1
        else:
            parent = rows[rp.parent_id]
            assert rp.tree_id == parent.tree_id
            assert rp.level == parent.level + 1
            assert parent.lft < rp.lft and rp.rght < parent.rght
            assert rp.root_id == parent.root_id
        descendants = sum(1 for other in rows.values() if other.tree_id == rp.tree_id
                          and rp.lft < other.lft < rp.rght)
        assert rp.rght - rp.lft == 2 * descendants + 1
    tree_ids = [rp.tree_id for rp in rows.values() if rp.parent_id is None]
    assert len(tree_ids) == len(set(tree_ids))
