"""Which providers can take an amount of a class right now."""
from candidates.sql import fetch

_USED = """COALESCE((SELECT SUM(a.used) FROM allocations a
                     WHERE a.provider_id = i.provider_id
                       AND a.resource_class_id = i.resource_class_id), 0)"""
_ONE_CLASS = f"""
    SELECT i.provider_id, rp.root_id, i.resource_class_id, %s, {_USED},
           i.total, i.reserved, i.allocation_ratio, i.max_unit,
           rp.tree_id, rp.lft, rp.rght
    FROM inventories i
    JOIN resource_providers rp ON rp.id = i.provider_id
    WHERE i.resource_class_id = %s AND i.min_unit <= %s AND i.max_unit >= %s
      AND (%s %% i.step_size) = 0
      AND {_USED} + %s <= (i.total - i.reserved) * i.allocation_ratio"""


def providers_with_capacity(amounts, scope):
    """Inventories where an amount fits, for several (class id, amount) pairs at once.

    An amount n of class rc fits provider P iff P has inventory of rc,
    min_unit <= n <= max_unit, n % step_size == 0 and
    used(P, rc) + n <= (total - reserved) * allocation_ratio.

    Args: amounts: iterable of (rc_id, amount); scope: candidates.sql.Scope.
    Returns rows (rp_id, root_id, rc_id, amount, used, total, reserved,
    allocation_ratio, max_unit, tree_id, lft, rght).

    One SELECT per pair, glued with UNION ALL (simple plans, index on
    inventories(resource_class_id, provider_id), usage summed per row through
    the allocations(provider_id, resource_class_id, used) index):

        SELECT i.provider_id, rp.root_id, i.resource_class_id, <n>,
               COALESCE((SELECT SUM(a.used) FROM allocations a
                         WHERE a.provider_id = i.provider_id
                           AND a.resource_class_id = i.resource_class_id), 0),
               i.total, i.reserved, i.allocation_ratio, i.max_unit, ...
        FROM inventories i JOIN resource_providers rp ON rp.id = i.provider_id
        WHERE i.resource_class_id = <rc> AND i.min_unit <= <n> AND i.max_unit >= <n>
          AND <n> % i.step_size = 0
          AND COALESCE((SELECT SUM(a.used) ...), 0) + <n>
              <= (i.total - i.reserved) * i.allocation_ratio  [AND <scope>]
    """
    amounts = sorted(set(amounts))
    if not amounts or scope.empty:
        return []
    where, scope_params = scope.where("rp")
    parts, params = [], []
    for rc, n in amounts:
        parts.append(_ONE_CLASS + where)
        params += [n, rc, n, n, n, n] + scope_params
    return fetch(" UNION ALL ".join(parts), params)
