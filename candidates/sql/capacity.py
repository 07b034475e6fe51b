"""Which providers can take an amount of a class right now."""
from candidates.sql import fetch

# Small scopes: sum the usage of each returned row through the allocations index.
# The step and capacity tests are applied to the returned rows: written as SQL
# predicates here they make PostgreSQL estimate a single matching inventory and
# drive the provider join from the wrong side.
_ONE_CLASS_CORRELATED = """
    SELECT i.provider_id, i.resource_class_id, %s,
           COALESCE((SELECT SUM(a.used) FROM allocations a
                     WHERE a.provider_id = i.provider_id
                       AND a.resource_class_id = i.resource_class_id), 0),
           i.total, i.reserved, i.allocation_ratio, i.max_unit, i.step_size
    FROM inventories i
    JOIN resource_providers rp ON rp.id = i.provider_id
    WHERE i.resource_class_id = %s AND i.min_unit <= %s AND i.max_unit >= %s"""
# The whole database: one grouped pass over the class's allocations is cheaper, and
# with no provider join every test can stay in SQL, so only fitting rows travel.
_ONE_CLASS_GROUPED = """
    SELECT i.provider_id, i.resource_class_id, %s, COALESCE(u.used, 0),
           i.total, i.reserved, i.allocation_ratio, i.max_unit, i.step_size
    FROM inventories i
    LEFT JOIN (SELECT provider_id, SUM(used) AS used FROM allocations
               WHERE resource_class_id = %s GROUP BY provider_id) u
           ON u.provider_id = i.provider_id
    WHERE i.resource_class_id = %s AND i.min_unit <= %s AND i.max_unit >= %s
      AND %s %% i.step_size = 0
      AND COALESCE(u.used, 0) + %s <= (i.total - i.reserved) * i.allocation_ratio"""


def providers_with_capacity(amounts, scope):
    """Inventories where an amount fits, for several (class id, amount) pairs at once.

    An amount n of class rc fits provider P iff P has inventory of rc,
    min_unit <= n <= max_unit, n % step_size == 0 and
    used(P, rc) + n <= (total - reserved) * allocation_ratio.

    Args: amounts: iterable of (rc_id, amount); scope: candidates.sql.Scope.
    Returns rows (rp_id, rc_id, amount, used, total, reserved, allocation_ratio,
    max_unit).

    One SELECT per pair, glued with UNION ALL:

        SELECT i.provider_id, i.resource_class_id, <n>,
               COALESCE((SELECT SUM(a.used) FROM allocations a
                         WHERE a.provider_id = i.provider_id
                           AND a.resource_class_id = i.resource_class_id), 0),
               i.total, i.reserved, i.allocation_ratio, i.max_unit, i.step_size
        FROM inventories i JOIN resource_providers rp ON rp.id = i.provider_id
        WHERE i.resource_class_id = <rc> AND i.min_unit <= <n> AND i.max_unit >= <n>
          AND <scope>

    For the whole database the usage comes from one grouped pass instead
    (LEFT JOIN (SELECT provider_id, SUM(used) ... GROUP BY provider_id)) and the
    step and capacity tests are part of the WHERE clause.
    """
    amounts = sorted(set(amounts))
    if not amounts or scope.empty:
        return []
    parts, params = [], []
    if scope.kind == "all":
        for rc, n in amounts:
            parts.append(_ONE_CLASS_GROUPED)
            params += [n, rc, rc, n, n, n, n]
    else:
        where, scope_params = scope.where("rp")
        for rc, n in amounts:
            parts.append(_ONE_CLASS_CORRELATED + where)
            params += [n, rc, n, n] + scope_params
    return [(rp, rc, n, used, total, reserved, ratio, max_unit)
            for rp, rc, n, used, total, reserved, ratio, max_unit, step
            in fetch(" UNION ALL ".join(parts), params)
            if n % step == 0 and used + n <= (total - reserved) * ratio]
