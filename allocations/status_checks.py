"""The upgrade and health checks of the Placement data (manage.py placement_status and
the operator UI's status page run these, the one copy of each).

Each check reads the database directly (never through the API, so it also
works when the data is too broken to serve), in a fixed number of queries
whatever the size of the data, and returns a CheckResult: Success, Warning or
Failure, with details, advice and a few offending rows.
"""
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection

from foundation.db_pool import connection_budget
from allocations import usage
from providers.models import Inventory, ResourceClass, ResourceProvider, Trait
from providers.rules import capacity
from providers.standard import standard_resource_classes, standard_traits

SUCCESS, WARNING, FAILURE = 0, 1, 2
RESULT_NAMES = {SUCCESS: "Success", WARNING: "Warning", FAILURE: "Failure"}
EXAMPLES = 5  # how many offending rows a check names

# Allocation rows whose (provider, class) has no inventory record.
ALLOCATIONS_WITHOUT_INVENTORY = """
SELECT rp.uuid, rc.name, c.uuid, a.used
FROM allocations a
JOIN resource_providers rp ON rp.id = a.provider_id
JOIN resource_classes rc ON rc.id = a.resource_class_id
JOIN consumers c ON c.id = a.consumer_id
LEFT JOIN inventories i
  ON i.provider_id = a.provider_id AND i.resource_class_id = a.resource_class_id
WHERE i.id IS NULL
ORDER BY rp.uuid, rc.name, c.uuid
"""

# Consumers holding no allocation (the contract: a consumer exists iff it has some).
CONSUMERS_WITHOUT_ALLOCATIONS = """
SELECT c.uuid FROM consumers c
WHERE NOT EXISTS (SELECT 1 FROM allocations a WHERE a.consumer_id = c.id)
ORDER BY c.uuid
"""

# Consumers whose project or user is the placeholder written for pre-1.8 requests.
INCOMPLETE_CONSUMERS = """
SELECT c.uuid FROM consumers c
JOIN projects p ON p.id = c.project_id
JOIN users u ON u.id = c.user_id
WHERE p.external_id = %s OR u.external_id = %s
ORDER BY c.uuid
"""


@dataclass
class CheckResult:
    """One check's outcome: `code` (SUCCESS/WARNING/FAILURE), what was found, what to do
    about it (advice matters only when the code is not SUCCESS) and up to EXAMPLES
    offending rows."""

    code: int
    details: str = ""
    advice: str = ""
    examples: list = field(default_factory=list)

    @property
    def name(self):
        return RESULT_NAMES[self.code]


def _rows(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _listing(items):
    return list(items)[:EXAMPLES]


def check_consumers():
    incomplete = [r[0] for r in _rows(INCOMPLETE_CONSUMERS, (
        settings.PLACEMENT_INCOMPLETE_CONSUMER_PROJECT_ID,
        settings.PLACEMENT_INCOMPLETE_CONSUMER_USER_ID))]
    empty = [r[0] for r in _rows(CONSUMERS_WITHOUT_ALLOCATIONS)]
    if not incomplete and not empty:
        return CheckResult(SUCCESS, "Every consumer has a project, a user and allocations.")
    parts, examples = [], []
    if incomplete:
        parts.append(f"{len(incomplete)} consumer(s) use the placeholder project/user "
                     "written for requests older than microversion 1.8")
        examples += [f"incomplete consumer {u}" for u in _listing(incomplete)]
    if empty:
        parts.append(f"{len(empty)} consumer record(s) hold no allocations")
        examples += [f"empty consumer {u}" for u in _listing(empty)]
    return CheckResult(
        WARNING, "; ".join(parts) + ".",
        "Have the owning service rewrite those allocations with project_id and user_id "
        "(PUT /allocations/{consumer} at 1.8+). Consumers without allocations can be "
        "removed with DELETE /allocations/{consumer}; clients must then send "
        "consumer_generation null.",
        examples)


def check_allocations_have_inventory():
    rows = _rows(ALLOCATIONS_WITHOUT_INVENTORY)
    if not rows:
        return CheckResult(SUCCESS, "Every allocation is backed by an inventory record.")
    return CheckResult(
        FAILURE,
        f"{len(rows)} allocation(s) refer to a resource class the provider has no "
        "inventory of.",
        "Restore the inventory (PUT /resource_providers/{uuid}/inventories) or have the "
        "consumers' owners rewrite their allocations; capacity checks cannot account "
        "for these allocations.",
        [f"consumer {c} holds {used} {rc} on provider {rp}" for rp, rc, c, used in
         rows[:EXAMPLES]])


def over_capacity_rows():
    """(provider uuid, class, used, total, reserved, allocation_ratio) of every inventory
    used beyond its capacity, by provider uuid and class: the SQL twin of
    providers.rules.capacity() (allocations.usage.over_capacity)."""
    return list(usage.over_capacity(Inventory.objects)
                .order_by("provider__uuid", "resource_class__name")
                .values_list("provider__uuid", "resource_class__name", "used", "total",
                             "reserved", "allocation_ratio"))


def check_capacity():
    rows = over_capacity_rows()
    if not rows:
        return CheckResult(SUCCESS, "No provider uses more than its capacity.")
    return CheckResult(
        WARNING,
        f"{len(rows)} (provider, resource class) pair(s) are used beyond "
        "(total - reserved) * allocation_ratio.",
        "This follows an inventory lowered below its usage. Those providers accept no "
        "new allocations of the class until usage drops: raise total or "
        "allocation_ratio, lower reserved, or move consumers elsewhere.",
        [f"provider {rp} {rc}: used {used} > capacity "
         f"{capacity(total, reserved, ratio):g}" for rp, rc, used, total, reserved, ratio in
         rows[:EXAMPLES]])


def tree_problems(rows):
    """Problems of provider tree fields. `rows`: (id, uuid, parent_id, root_id, lft,
    rght, tree_id, level) of every provider. Returns a list of strings."""
    nodes = {r[0]: r for r in rows}
    children = {}
    for row in rows:
        children.setdefault(row[2], []).append(row)
    problems = []
    true_root, depth = _resolve_roots(nodes, problems)
    tree_ids = {}
    for row in rows:
        pk, uuid, parent_id, root_id, lft, rght, tree_id, level = row
        root = true_root[pk]
        if root is not None and root_id != root:
            problems.append(f"provider {uuid}: root is {_uuid(nodes, root_id)}, "
                            f"its tree's root is {_uuid(nodes, root)}")
        if level != depth[pk]:
            problems.append(f"provider {uuid}: level {level}, depth in tree {depth[pk]}")
        if root is not None:
            expected = nodes[root][6]
            if tree_id != expected:
                problems.append(f"provider {uuid}: tree_id {tree_id}, its root's is {expected}")
            if parent_id is None:
                if tree_id in tree_ids:
                    problems.append(f"providers {tree_ids[tree_id]} and {uuid} are roots "
                                    f"sharing tree_id {tree_id}")
                tree_ids.setdefault(tree_id, uuid)
    # Nested sets: a root spans 1..2n, each node's children tile (lft, rght) in order.
    for row in rows:
        pk, uuid, parent_id, _, lft, rght, _, _ = row
        if parent_id is None and lft != 1:
            problems.append(f"provider {uuid}: root lft is {lft}, expected 1")
        kids = sorted(children.get(pk, []), key=lambda r: r[4])
        expected_lft = lft + 1
        for kid in kids:
            if kid[4] != expected_lft or kid[5] <= kid[4]:
                problems.append(f"provider {kid[1]}: lft/rght {kid[4]}/{kid[5]} do not nest "
                                f"inside parent {uuid} ({lft}/{rght})")
                break
            expected_lft = kid[5] + 1
        else:
            if rght != expected_lft:
                problems.append(f"provider {uuid}: rght is {rght}, its subtree needs "
                                f"{expected_lft}")
    return problems


def _resolve_roots(nodes, problems):
    """Follow parent links: provider id -> (id of the top of its chain, depth).

    A chain that loops or ends at a missing parent gets root None."""
    root, depth = {}, {}
    for start in nodes:
        path, current = [], start
        while current not in root:
            if current in path:
                problems.append(f"provider {nodes[current][1]}: parent chain has a cycle")
                for pk in path:
                    root[pk], depth[pk] = None, 0
                path = []
                break
            parent = nodes[current][2]
            if parent is None:
                root[current], depth[current] = current, 0
                break
            if parent not in nodes:
                problems.append(f"provider {nodes[current][1]}: parent id {parent} "
                                "does not exist")
                root[current], depth[current] = None, 0
                break
            path.append(current)
            current = parent
        for pk in reversed(path):
            parent = nodes[pk][2]
            root[pk], depth[pk] = root[parent], depth[parent] + 1
    return root, depth


def _uuid(nodes, pk):
    return nodes[pk][1] if pk in nodes else f"<missing id {pk}>"


def check_trees():
    rows = list(ResourceProvider.objects.order_by("id").values_list(
        "id", "uuid", "parent_id", "root_id", "lft", "rght", "tree_id", "level"))
    problems = tree_problems(rows)
    if not problems:
        return CheckResult(SUCCESS, f"{len(rows)} provider(s); every tree is consistent.")
    return CheckResult(
        FAILURE,
        f"{len(problems)} inconsistency(ies) in provider tree fields (root, parent, "
        "lft/rght/tree_id/level).",
        "Stop writers, back up the database, then rebuild the nested sets with "
        "`python manage.py shell -c 'from providers.models import ResourceProvider; "
        "ResourceProvider.objects.rebuild()'` and set each provider's root to the top "
        "of its parent chain. Queries on trees (in_tree, allocation candidates) are "
        "unreliable until then.",
        problems[:EXAMPLES])


def check_standard_names():
    have_rc = set(ResourceClass.objects.values_list("name", flat=True))
    have_traits = set(Trait.objects.values_list("name", flat=True))
    missing_rc = [n for n in standard_resource_classes() if n not in have_rc]
    missing_traits = [n for n in standard_traits() if n not in have_traits]
    if not missing_rc and not missing_traits:
        return CheckResult(SUCCESS, f"All {len(have_rc & set(standard_resource_classes()))} "
                                    "standard resource classes and the standard traits exist.")
    return CheckResult(
        WARNING,
        f"{len(missing_rc)} standard resource class(es) and {len(missing_traits)} "
        "standard trait(s) of the installed os-resource-classes / os-traits are missing.",
        "Run `python manage.py sync_standard` (or `migrate`).",
        (missing_rc + missing_traits)[:EXAMPLES])


# (title, check function): the command and the status page run these, in this order.
# What the database accepts for the service's user: (max_connections, reserved, the
# user's limit, the database's limit), -1 where there is no limit.
CONNECTION_LIMITS = {
    "postgresql": """
        SELECT current_setting('max_connections')::int,
               CASE WHEN r.rolsuper THEN 0
                    ELSE current_setting('superuser_reserved_connections')::int END,
               r.rolconnlimit, d.datconnlimit
        FROM pg_roles r, pg_database d
        WHERE r.rolname = current_user AND d.datname = current_database()
    """,
    # max_user_connections 0: no limit per user (MariaDB and MySQL alike)
    "mysql": """
        SELECT @@max_connections, 0,
               CASE WHEN @@max_user_connections = 0 THEN -1
                    ELSE @@max_user_connections END, -1
    """,
}


def check_connection_budget():
    """Can every API process hold all the connections it may open?"""
    if connection.vendor not in CONNECTION_LIMITS:
        return CheckResult(SUCCESS, "SQLite: one machine, no connection limit.")
    (maximum, reserved, role_limit, database_limit), = _rows(
        CONNECTION_LIMITS[connection.vendor])
    accepted = min(limit for limit in (maximum - reserved, role_limit, database_limit)
                   if limit >= 0)
    processes = settings.PLACEMENT_API_PROCESSES
    pool = settings.PLACEMENT_DB_POOL["max_pool_size"]
    needed = connection_budget(pool, processes["workers"], processes["threads"],
                               processes["nodes"])
    details = (f"{processes['nodes']} node(s) x {processes['workers']} worker(s) x "
               f"min({processes['threads']} threads, max_pool_size {pool}) = {needed} "
               f"connections; the database accepts {accepted}.")
    if needed <= accepted:
        return CheckResult(SUCCESS, details)
    return CheckResult(
        WARNING, details,
        advice="Lower [placement_database] max_pool_size or the workers, or raise the "
               "database's max_connections (or put pgbouncer in front): beyond it a "
               "burst of requests is answered 503.")


CHECKS = [
    ("Consumers have a project, a user and allocations", check_consumers),
    ("Allocations are backed by inventory", check_allocations_have_inventory),
    ("Provider trees are consistent", check_trees),
    ("Usage within capacity", check_capacity),
    ("Standard resource classes and traits", check_standard_names),
    ("Database connection budget", check_connection_budget),
]




def run_checks():
    """[(title, CheckResult)] of every check in CHECKS, and the worst code among them."""
    results = [(title, check()) for title, check in CHECKS]
    return results, max((result.code for _, result in results), default=SUCCESS)
