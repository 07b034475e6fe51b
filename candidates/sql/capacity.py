"""Which providers can take an amount of a class right now."""
from candidates.sql import fetch


def providers_with_capacity(amounts, scope):
    """Inventories where an amount fits, for several (class id, amount) pairs at once.

    An amount n of class rc fits provider P iff P has inventory of rc,
    min_unit <= n <= max_unit, n % step_size == 0 and
    used(P, rc) + n <= (total - reserved) * allocation_ratio.

    Args: amounts: iterable of (rc_id, amount); scope: candidates.sql.Scope.
    Returns rows (rp_id, root_id, rc_id, amount, used, capacity, max_unit,
    tree_id, lft, rght) where capacity = int((total - reserved) * ratio).

        SELECT ... FROM (SELECT %s AS rc, %s AS amount UNION ALL ...) req
        JOIN inventories i ON i.resource_class_id = req.rc
        JOIN resource_providers rp ON rp.id = i.provider_id
        WHERE i.min_unit <= req.amount AND i.max_unit >= req.amount
          AND req.amount % i.step_size = 0 [AND <scope>]
        -- then, outside: used + amount <= (total - reserved) * allocation_ratio
    """
    amounts = sorted(set(amounts))
    if not amounts or scope.empty:
        return []
    request = " UNION ALL ".join(["SELECT %s AS rc, %s AS amount"] * len(amounts))
    params = [value for pair in amounts for value in pair]
    where, scope_params = scope.where("rp")
    sql = f"""
        SELECT t.provider_id, t.root_id, t.rc, t.amount, t.used,
               t.total, t.reserved, t.allocation_ratio, t.max_unit,
               t.tree_id, t.lft, t.rght
        FROM (
            SELECT i.provider_id, rp.root_id, req.rc, req.amount,
                   COALESCE((SELECT SUM(a.used) FROM allocations a
                             WHERE a.provider_id = i.provider_id
                               AND a.resource_class_id = i.resource_class_id), 0) AS used,
                   i.total, i.reserved, i.allocation_ratio, i.max_unit,
                   rp.tree_id, rp.lft, rp.rght
            FROM ({request}) req
            JOIN inventories i ON i.resource_class_id = req.rc
            JOIN resource_providers rp ON rp.id = i.provider_id
            WHERE i.min_unit <= req.amount AND i.max_unit >= req.amount
              AND (req.amount %% i.step_size) = 0{where}
        ) t
        WHERE t.used + t.amount <= (t.total - t.reserved) * t.allocation_ratio
    """
    rows = fetch(sql, params + scope_params)
    return [(rp, root, rc, amount, used, int((total - reserved) * ratio), max_unit,
             tree, lft, rght)
            for rp, root, rc, amount, used, total, reserved, ratio, max_unit, tree, lft, rght
            in rows]
