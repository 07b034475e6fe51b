"""Inventories with their usage, and which amounts fit them."""
from django.db import connections
from django.db.models import Case, Count, F, FloatField, IntegerField, Value, When
from django.db.models.functions import Cast

from candidates.candidate_set import misfit
from candidates.sql import fetch, topology
from candidates.sql.rows import InventoryKey
from foundation.db_routing import read_alias
from providers.models import Inventory
from allocations.usage import with_usage
from providers.querysets import capacity_expression
from providers.rules import capacity

_COLUMNS = """i.provider_id, i.resource_class_id, {used} AS used, i.total, i.reserved,
           i.allocation_ratio, i.min_unit, i.max_unit, i.step_size"""
# The usage of each provider and class that has allocations (usage(), and _WIDE's).
_USAGE = """
    SELECT a.provider_id, a.resource_class_id, SUM(a.used) AS used
    FROM allocations a WHERE 1 = 1{usage_where}
    GROUP BY a.provider_id, a.resource_class_id"""
# The whole database, or a wide share of it: one grouped pass over the allocations.
_WIDE = f"""
    SELECT {_COLUMNS.format(used="COALESCE(u.used, 0)")}
    FROM inventories i
    LEFT JOIN ({_USAGE}) u
           ON u.provider_id = i.provider_id AND u.resource_class_id = i.resource_class_id
    WHERE 1 = 1{{classes}}"""
# MariaDB's split materialization may push the join into the grouped subquery and sum
# the allocations once per inventory row (EXPLAIN: <derived> ref key0 with allocations
# ref, 30,000 loops at 10,000 flat providers with 90,000 allocations), 1.6 to 3 times
# as slow as the one grouped pass meant here (docs/performance.md, "MariaDB: the hot
# statements' plans"). The statement-scoped SET is MariaDB's syntax; MySQL 8 has no
# split materialization to turn off.
_MARIADB_ONE_PASS = "SET STATEMENT optimizer_switch = 'split_materialized=off' FOR "
# A few trees or providers: sum the usage of each row through the allocations index.
_CORRELATED_USAGE = """COALESCE((SELECT SUM(a.used) FROM allocations a
                     WHERE a.provider_id = i.provider_id
                       AND a.resource_class_id = i.resource_class_id), 0)"""
_SOME = f"""
    SELECT {_COLUMNS.format(used=_CORRELATED_USAGE)}
    FROM inventories i
    WHERE 1 = 1{{classes}}{{scope}}"""
# PostgreSQL: rows equal but for the provider come as one, with an array of providers (a
# cloud of identical hosts is a handful of rows: far less to transfer and convert).
_GROUPED = """
    SELECT r.resource_class_id, r.used, r.total, r.reserved, r.allocation_ratio,
           r.min_unit, r.max_unit, r.step_size, array_agg(r.provider_id)
    FROM ({rows}) r
    GROUP BY r.resource_class_id, r.used, r.total, r.reserved, r.allocation_ratio,
             r.min_unit, r.max_unit, r.step_size"""


def inventories(scope, rc_ids=None, exclude_rc_ids=()):
    """inventory_groups() as rows (rp_id, rc_id, used, total, ...), one per provider and
    class."""
    if _read_grouped():
        return rows_of(inventory_groups(scope, rc_ids, exclude_rc_ids))
    sql, params = _rows_query(scope, rc_ids, exclude_rc_ids)
    return fetch(sql, params) if sql else []


def shown_groups(scope, rc_ids=None, exclude_rc_ids=()):
    """What provider summaries show of the inventories in scope, as inventory_groups()
    pairs (key, [rp_id, ...]): grouped where the database or the snapshot groups them;
    elsewhere each row is its own group, in the order read (no grouping pass in Python)."""
    if _read_grouped():
        return inventory_groups(scope, rc_ids, exclude_rc_ids)
    sql, params = _rows_query(scope, rc_ids, exclude_rc_ids)
    return [(InventoryKey._make(row[1:]), (row[0],)) for row in fetch(sql, params)] if sql else []


def rows_of(groups):
    """inventory_groups() -> rows (rp_id, rc_id, used, total, ...)."""
    return [(rp,) + key for key, providers in groups for rp in providers]


def rows_by_key(groups):
    """inventory_groups() -> {(rp_id, rc_id): (used, total, ...)}, one tuple per group
    shared by its providers."""
    found = {}
    for key, providers in groups:
        rc, shown = key[0], tuple(key[1:])
        for rp in providers:
            found[(rp, rc)] = shown
    return found


def grouped(rows):
    """Rows (rp_id, rc_id, used, ...) -> [(InventoryKey of the rest, [rp_id, ...])]."""
    groups = {}
    for row in rows:
        key = row[1:]
        providers = groups.get(key)
        if providers is None:
            providers = groups[key] = []
        providers.append(row[0])
    return [(InventoryKey._make(key), providers) for key, providers in groups.items()]


def inventory_groups(scope, rc_ids=None, exclude_rc_ids=()):
    """[(rows.InventoryKey, [rp_id, ...]), ...]: the inventories in scope grouped by
    everything but the provider
    (on PostgreSQL by the database, see _GROUPED), of every inventory in scope
    (candidates.sql.Scope) [of the classes rc_ids] [except the classes exclude_rc_ids].
    The rows grouped are:

        SELECT i.provider_id, i.resource_class_id, COALESCE(u.used, 0), i.total, ...
        FROM inventories i
        LEFT JOIN (SELECT provider_id, resource_class_id, SUM(used) AS used
                   FROM allocations [WHERE resource_class_id IN (...)]
                   GROUP BY provider_id, resource_class_id) u ON ...
        [WHERE i.resource_class_id IN (...)]

    While a topology snapshot is in use (sql/topology.py), the inventories come from it
    and only their usage is read (usage()).

    For a scope of a few providers or trees each row's usage is a correlated SUM
    instead, and the scope restricts i.provider_id (an explicit id list is best:
    PostgreSQL then reads the rows through the provider index, where a join to a range of
    trees makes it scan every inventory). A wider range or set of trees keeps the
    grouped pass, over its own allocations: there a correlated SUM per row costs more
    (and PostgreSQL costs it high enough to JIT-compile it). Which amounts fit is
    decided in Python (fitting()): written as SQL predicates the
    capacity tests make PostgreSQL estimate a single matching row and drive the
    provider join from the wrong side.
    """
    snapshot = topology.active()
    if snapshot is not None:
        if _nothing_to_read(scope, rc_ids):
            return []
        return add_usage(snapshot.inventory_groups(scope, rc_ids, exclude_rc_ids),
                         usage(scope, rc_ids, exclude_rc_ids))
    sql, params = _rows_query(scope, rc_ids, exclude_rc_ids)
    if not sql:
        return []
    if not _grouped_by_database():
        return grouped(fetch(sql, params))
    return [(InventoryKey._make(row[:-1]), row[-1])
            for row in fetch(_GROUPED.format(rows=sql), params)]


# PostgreSQL, a snapshot not yet confirmed: the token comes along in every row, and in a
# row of its own when nothing is allocated.
_USAGE_WITH_TOKEN = """
    SELECT u.*, t.token FROM topology_token t LEFT JOIN ({sql}) u ON TRUE
    WHERE t.id = 1"""


def usage(scope, rc_ids=None, exclude_rc_ids=()):
    """{(rp_id, rc_id): units allocated} of the providers in scope [of the classes rc_ids]
    [except the classes exclude_rc_ids]; only pairs with allocations.

    A request answering from a settled snapshot not yet confirmed (topology.token_wanted)
    reads the token along, saving a round trip (SQLite has none to save: the token is
    read on its own there)."""
    classes, params = _classes("a", rc_ids, exclude_rc_ids)
    where, scope_params = scope.provider_filter("a.provider_id")
    sql, params = _USAGE.format(usage_where=classes + where), params + scope_params
    if not (topology.token_wanted() and _grouped_by_database()):
        return {(rp, rc): used for rp, rc, used in fetch(sql, params)}
    rows = fetch(_USAGE_WITH_TOKEN.format(sql=sql), params)
    topology.token_read(rows[0][-1] if rows else None)
    return {(rp, rc): used for rp, rc, used, _ in rows if rp is not None}


def add_usage(groups, used):
    """Inventory groups without usage [((rc_id, total, reserved, allocation_ratio,
    min_unit, max_unit, step_size), [rp_id, ...]), ...] and usage() -> inventory_groups()
    pairs: a group splits by the usage of its providers (0 where none)."""
    if not used:
        return [(InventoryKey._make((key[0], 0) + key[1:]), rps) for key, rps in groups]
    used_classes = {rc for _, rc in used}
    found = []
    for key, rps in groups:
        rc, rest = key[0], key[1:]
        if rc not in used_classes:
            found.append((InventoryKey._make((rc, 0) + rest), rps))
            continue
        by_usage = {}
        for rp in rps:
            amount = used.get((rp, rc), 0)
            providers = by_usage.get(amount)
            if providers is None:
                providers = by_usage[amount] = []
            providers.append(rp)
        found += [(InventoryKey._make((rc, amount) + rest), providers)
                  for amount, providers in by_usage.items()]
    return found


def _read_grouped():
    """Do inventories come grouped (by the database, or from the snapshot)?"""
    return _grouped_by_database() or topology.active() is not None


def _nothing_to_read(scope, rc_ids):
    """No inventory can be in scope, or no class is asked for."""
    return scope.empty or (rc_ids is not None and not rc_ids)


def _grouped_by_database():
    # array_agg is PostgreSQL's; MySQL's JSON_ARRAYAGG would hand back text to parse,
    # so on MySQL (as on SQLite) the rows are grouped here, in one pass.
    return connections[read_alias()].vendor == "postgresql"


def _mariadb():
    connection = connections[read_alias()]
    return connection.vendor == "mysql" and connection.mysql_is_mariadb


def _rows_query(scope, rc_ids, exclude_rc_ids):
    """(sql, params) of the rows inventory_groups() groups; (None, None) when there can
    be none."""
    if _nothing_to_read(scope, rc_ids):
        return None, None
    classes, params = _classes("i", rc_ids, exclude_rc_ids)
    where, scope_params = scope.provider_filter("i.provider_id")
    if scope.kind == "all" or _wide(scope):
        usage_classes, usage_params = _classes("a", rc_ids, exclude_rc_ids)
        usage_scope, usage_scope_params = scope.provider_filter("a.provider_id")
        sql = _WIDE.format(classes=classes + where, usage_where=usage_classes + usage_scope)
        if _mariadb():
            sql = _MARIADB_ONE_PASS + sql
        params = usage_params + usage_scope_params + params + scope_params
    else:
        sql = _SOME.format(classes=classes, scope=where)
        params = params + scope_params
    return sql, params


# A range of more root ids than this, or more trees, sums its usage in one grouped pass.
CORRELATED_USAGE_UP_TO = 256


def _wide(scope):
    """Does the scope span more trees than a correlated SUM per row serves well? (A
    list of provider ids is always a batch the engine sized to be read by id.)"""
    if scope.kind == "range":
        return scope.hi - scope.lo > CORRELATED_USAGE_UP_TO
    return scope.kind == "roots" and len(scope.ids) > CORRELATED_USAGE_UP_TO


def _classes(alias, rc_ids, exclude_rc_ids):
    """(" AND ...", params): alias.resource_class_id in rc_ids (None: any class) and not
    in exclude_rc_ids."""
    sql, params = "", []
    if rc_ids is not None:
        rc_ids = sorted(set(rc_ids))
        sql = f" AND {alias}.resource_class_id IN ({', '.join(['%s'] * len(rc_ids))})"
        params = list(rc_ids)
    if exclude_rc_ids:
        marks = ", ".join(["%s"] * len(exclude_rc_ids))
        sql += f" AND {alias}.resource_class_id NOT IN ({marks})"
        params += list(exclude_rc_ids)
    return sql, params


def fitting(amounts, rows):
    """fitting_groups() over inventory rows."""
    return fitting_groups(amounts, grouped(rows))


def fitting_groups(amounts, groups):
    """{(rc_id, amount): [rp_id, ...]}: the providers of inventory_groups() `groups`
    each amount fits.

    An amount n of class rc fits provider P iff P has inventory of rc and
    candidate_set.misfit() finds nothing wrong: min_unit <= n <= max_unit,
    n % step_size == 0 and used(P, rc) + n <= (total - reserved) * allocation_ratio.
    """
    by_class = {}
    for rc, n in set(amounts):
        by_class.setdefault(rc, []).append((n, []))
    # A cloud is mostly identical hosts: rows equal but for the provider get one verdict.
    for key, rps in groups:
        for providers in _fitting_lists(by_class.get(key.rc_id, ()), *key[1:]):
            providers.extend(rps)
    return {(rc, n): providers for rc, pairs in by_class.items() for n, providers in pairs}


def _fitting_lists(wanted, used, total, reserved, ratio, min_unit, max_unit, step):
    """The provider lists of `wanted` ((amount, providers), ...) whose amount fits."""
    usable = capacity(total, reserved, ratio)
    return [providers for n, providers in wanted
            if misfit(n, used, usable, min_unit, max_unit, step) is None]


def providers_with_capacity(amounts, scope):
    """fitting() over the inventories of the amounts' classes in scope."""
    amounts = list(amounts)
    return fitting_groups(amounts, inventory_groups(scope, rc_ids=[rc for rc, _ in amounts]))


def first_root_with_room(start, amounts):
    """The lowest root id >= start whose tree holds, for every (rc_id, n) of `amounts`
    (one amount per class), an inventory of rc_id with room for n: used + n <= capacity,
    misfit()'s capacity rule as providers.querysets writes it in SQL (the other rules
    are left to the batch that reads the tree); None if no tree does.

    A tree without such room cannot anchor a candidate of a request asking for these
    amounts (when no sharing provider can supply them): a limited request skips the
    full trees of a cloud filled from its lowest ids in one statement, where reading
    them batch by batch costs about as much as an unlimited request. PostgreSQL walks
    the providers in root-id order and stops at the first tree with room:

        SELECT rp.root_id FROM inventories i JOIN resource_providers rp ON ...
        WHERE rp.root_id >= %s AND i.resource_class_id IN (...)
          AND <usage> + CASE i.resource_class_id WHEN ... END
              <= (i.total - i.reserved) * i.allocation_ratio
        GROUP BY rp.root_id HAVING COUNT(DISTINCT i.resource_class_id) = <classes>
        ORDER BY rp.root_id LIMIT 1
    """
    wanted = Case(*(When(resource_class_id=rc, then=Value(n)) for rc, n in amounts),
                  output_field=IntegerField())
    roots = (with_usage(Inventory.objects.using(read_alias())
                        .filter(provider__root_id__gte=start,
                                resource_class_id__in=[rc for rc, _ in amounts]))
             .annotate(_capacity=capacity_expression(),
                       _after=Cast(F("used") + wanted, FloatField()))
             .filter(_after__lte=F("_capacity"))
             .values("provider__root_id")
             .annotate(_classes=Count("resource_class_id", distinct=True))
             .filter(_classes=len(amounts))
             .order_by("provider__root_id")
             .values_list("provider__root_id", flat=True))
    return next(iter(roots[:1]), None)
