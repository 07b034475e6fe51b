"""Inventories of the requested classes, with usage, and which amounts fit them."""
from candidates.sql import fetch

_COLUMNS = """i.provider_id, i.resource_class_id, {used}, i.total, i.reserved,
           i.allocation_ratio, i.min_unit, i.max_unit, i.step_size"""
# The whole database: one grouped pass over the classes' allocations.
_EVERYTHING = f"""
    SELECT {_COLUMNS.format(used="COALESCE(u.used, 0)")}
    FROM inventories i
    LEFT JOIN (SELECT provider_id, resource_class_id, SUM(used) AS used FROM allocations
               WHERE resource_class_id IN ({{marks}})
               GROUP BY provider_id, resource_class_id) u
           ON u.provider_id = i.provider_id AND u.resource_class_id = i.resource_class_id
    WHERE i.resource_class_id IN ({{marks}})"""
# A few trees or providers: sum the usage of each row through the allocations index.
_SOME = f"""
    SELECT {_COLUMNS.format(used='''COALESCE((SELECT SUM(a.used) FROM allocations a
                     WHERE a.provider_id = i.provider_id
                       AND a.resource_class_id = i.resource_class_id), 0)''')}
    FROM inventories i
    JOIN resource_providers rp ON rp.id = i.provider_id
    WHERE i.resource_class_id IN ({{marks}}){{scope}}"""


def inventories(rc_ids, scope):
    """Rows (rp_id, rc_id, used, total, reserved, allocation_ratio, min_unit, max_unit,
    step_size) of every inventory of these classes in scope (candidates.sql.Scope).

        SELECT i.provider_id, i.resource_class_id, COALESCE(u.used, 0), i.total, ...
        FROM inventories i
        LEFT JOIN (SELECT provider_id, resource_class_id, SUM(used) AS used
                   FROM allocations WHERE resource_class_id IN (...)
                   GROUP BY provider_id, resource_class_id) u ON ...
        WHERE i.resource_class_id IN (...)

    For a scope smaller than everything the provider table is joined for the
    scope's condition and each row's usage is a correlated SUM instead. Which
    amounts fit is decided in Python (fitting()): written as SQL predicates the
    capacity tests make PostgreSQL estimate a single matching row and drive the
    provider join from the wrong side.
    """
    rc_ids = sorted(set(rc_ids))
    if not rc_ids or scope.empty:
        return []
    marks = ", ".join(["%s"] * len(rc_ids))
    if scope.kind == "all":
        return fetch(_EVERYTHING.format(marks=marks), rc_ids + rc_ids)
    where, params = scope.where("rp")
    return fetch(_SOME.format(marks=marks, scope=where), rc_ids + params)


def fitting(amounts, rows):
    """{(rc_id, amount): [rp_id, ...]}: the providers of `rows` each amount fits.

    An amount n of class rc fits provider P iff P has inventory of rc,
    min_unit <= n <= max_unit, n % step_size == 0 and
    used(P, rc) + n <= (total - reserved) * allocation_ratio.
    """
    by_class = {}
    for rc, n in set(amounts):
        by_class.setdefault(rc, []).append((n, []))
    for rp, rc, used, total, reserved, ratio, min_unit, max_unit, step in rows:
        for n, providers in by_class.get(rc, ()):
            if (min_unit <= n <= max_unit and n % step == 0
                    and used + n <= (total - reserved) * ratio):
                providers.append(rp)
    return {(rc, n): providers for rc, pairs in by_class.items() for n, providers in pairs}


def providers_with_capacity(amounts, scope):
    """fitting() over the inventories of the amounts' classes in scope."""
    amounts = list(amounts)
    return fitting(amounts, inventories([rc for rc, _ in amounts], scope))
