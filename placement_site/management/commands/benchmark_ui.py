"""Time the operator UI's pages on a synthetic cloud of N providers.

Usage::

    python manage.py benchmark_ui [--providers 1000] [--repeat 7]

Builds one cloud in the configured database (DATABASE_URL), inside a transaction
that is rolled back at the end, so nothing is left behind; the providers table
must be empty, so the figures describe this cloud only. The cloud, for
``--providers 1000``:

* two big trees of 200 (root, 3 NUMA sockets, 196 ``CUSTOM_DEV`` devices, every
  third device allocated): the provider list's folding and "more" fragments;
* 110 compute trees of 5 (root with MEMORY_MB/DISK_GB, rack trait, one of ten
  aggregates, AVX2 on odd ones; two NUMA nodes with VCPU at ratio 4; two PFs
  with SRIOV_NET_VF and CUSTOM_PHYSNET1/2), two consumers each (20 projects, 50
  users, half of type INSTANCE): capacity, bulk edit, usages, candidates;
* 10 sharing disk providers (MISC_SHARES_VIA_AGGREGATE) in the compute trees'
  shared aggregate: granular and sharing candidates;
* 40 flat hosts, one consumer each, some over capacity: the "over capacity"
  filter and the status checks.

Rows are bulk-created (benchmark_candidates' helpers), not written through the
services: this measures reads, and 1,000 providers through the services would
take minutes. A staff user is logged in with Django's test client, each page is
requested once (warm-up, must answer 200), then ``--repeat`` times, and a table
of median wall ms, median CPU ms (this thread's time, so waits for a core on a
busy machine are not counted), SQL queries and response size is printed, with
the load average. The per-request log lines (placement.request, INFO) are turned
off while it runs, to keep the table readable. The command exits non-zero if any
page did not answer 200.
"""
import logging
import os
import statistics
import time
import uuid as uuidlib
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from candidates.management.commands.benchmark_candidates import (
    _analyze,
    _ids,
    _inventory,
    _next_tree_id,
    _providers,
)
from providers.models import (
    Aggregate,
    Inventory,
    ProviderAggregate,
    ProviderTrait,
    ResourceClass,
    ResourceProvider,
    Trait,
)

MIN_PROVIDERS = 20
AGGS = [f"00000000-0000-0000-0000-{i:012d}" for i in range(10)]
SHARED_AGG = "a0000000-0000-0000-0000-00000000000a"


@dataclass
class Node:
    """One provider to build: inventory {"VCPU": 8 or {"total": 8, ...}}, children."""
    name: str
    inventory: dict = field(default_factory=dict)
    traits: list = field(default_factory=list)
    aggregates: list = field(default_factory=list)
    children: list = field(default_factory=list)
    allocations: list = field(default_factory=list)   # [(consumer key, {rc: used})]
    parent: "Node" = None
    obj: ResourceProvider = None   # once created


@dataclass
class Cloud:
    """What the pages need to name: the trees, and the consumers' projects/users/types."""
    trees: list
    consumers: dict   # key -> (project, user, consumer type or None)
    big_root: str = ""
    compute_root: str = ""
    numa_names: list = field(default_factory=list)
    consumer_key: str = ""
    consumer_uuid: str = ""   # once created


def plan(providers):
    """The cloud of `providers` providers as Node trees (see the module docstring)."""
    trees, consumers = [], {}
    big_size = max(4, providers // 5)
    sharing = max(1, providers // 100)
    flat_min = max(1, providers // 25)
    compute = (providers - 2 * big_size - sharing - flat_min) // 5
    flat = providers - 2 * big_size - sharing - 5 * compute
    cloud = Cloud(trees, consumers)
    for t in range(2):
        root = Node(f"big-{t}", {"MEMORY_MB": 65536, "VCPU": 64}, aggregates=AGGS[:1])
        devices = big_size - 4
        for s in range(3):
            socket = Node(f"big-{t}-s{s}", {"VCPU": 32}, traits=["HW_NUMA_ROOT"])
            for d in range(devices // 3 + (1 if s < devices % 3 else 0)):
                device = Node(f"big-{t}-s{s}-d{d}", {"CUSTOM_DEV": 1})
                if d % 3 == 0:
                    key = f"dev-{t}-{s}-{d}"
                    consumers[key] = ("project-devices", "user-devices", None)
                    device.allocations.append((key, {"CUSTOM_DEV": 1}))
                socket.children.append(device)
            root.children.append(socket)
        trees.append(root)
    for t in range(compute):
        root = Node(f"cn{t:04d}",
                    {"MEMORY_MB": {"total": 262144, "reserved": 4096}, "DISK_GB": 2000},
                    traits=[f"CUSTOM_RACK_{t % 10}"] + (["HW_CPU_X86_AVX2"] if t % 2 else []),
                    aggregates=[AGGS[t % 10]] + ([SHARED_AGG] if t % 3 else []))
        numas = [Node(f"cn{t:04d}-numa{n}", {"VCPU": {"total": 32, "allocation_ratio": 4.0}},
                      traits=["HW_NUMA_ROOT"]) for n in range(2)]
        pfs = [Node(f"cn{t:04d}-pf{p}", {"SRIOV_NET_VF": 8}, traits=[f"CUSTOM_PHYSNET{p + 1}"])
               for p in range(2)]
        root.children = numas + pfs
        cloud.numa_names += [n.name for n in numas]
        for c in range(2):
            key = f"vm-{t}-{c}"
            consumers[key] = (f"project-{t % 20}", f"user-{t % 50}", "INSTANCE" if c else None)
            numas[c].allocations.append((key, {"VCPU": 8 + (t * 7 + c * 13) % 120}))
            root.allocations.append((key, {"MEMORY_MB": 16384 * (1 + t % 8), "DISK_GB": 40}))
        trees.append(root)
    for i in range(sharing):
        trees.append(Node(f"shared-disk{i:02d}", {"DISK_GB": 10000},
                          traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[SHARED_AGG]))
    for i in range(flat):
        key = f"flat-{i}"
        consumers[key] = (f"project-{i % 20}", f"user-{i % 50}", "INSTANCE")
        # (i % 9) * 2 + 1 of 16 VCPU: every ninth host is over capacity (17 of 16)
        trees.append(Node(f"flat{i:03d}", {"VCPU": 16, "MEMORY_MB": 32768, "DISK_GB": 500},
                          aggregates=[AGGS[i % 10]],
                          allocations=[(key, {"VCPU": (i % 9) * 2 + 1, "MEMORY_MB": 2048})]))
    cloud.big_root, cloud.compute_root, cloud.consumer_key = "big-0", "cn0000", "vm-0-0"
    return cloud


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


def _number(node, lft, level):
    """Nested-set fields of `node`'s subtree from `lft`; returns the next free number."""
    node.lft, node.level = lft, level
    nxt = lft + 1
    for child in node.children:
        nxt = _number(child, nxt, level + 1)
    node.rght = nxt
    return nxt + 1


@transaction.atomic
def build(cloud):
    """Bulk-create the planned cloud: providers level by level (a parent needs its id
    before its children), then inventories, traits, aggregates, consumers, allocations.
    Returns the number of providers."""
    nodes = [node for tree in cloud.trees for node in _walk(tree)]
    rc = _ids(ResourceClass, "name", sorted({name for n in nodes for name in n.inventory}))
    traits = _ids(Trait, "name", sorted({t for n in nodes for t in n.traits}))
    aggs = _ids(Aggregate, "uuid", sorted({a for n in nodes for a in n.aggregates}))
    first_tree_id = _next_tree_id()
    for offset, tree in enumerate(cloud.trees):
        _number(tree, 1, 0)
        for node in _walk(tree):
            node.tree = tree
            node.tree_id = first_tree_id + offset
            for child in node.children:
                child.parent = node
    level = list(cloud.trees)
    while level:
        objs = _providers([{"name": n.name, "tree_id": n.tree_id, "lft": n.lft,
                            "rght": n.rght, "level": n.level,
                            "parent_id": n.parent.obj.id if n.parent else None,
                            "root_id": n.tree.obj.id if n.parent else None}
                           for n in level])
        for node, obj in zip(level, objs):
            node.obj = obj
        if level[0].parent is None:   # roots point at themselves
            ResourceProvider.objects.filter(id__in=[o.id for o in objs]).update(root=F("id"))
        level = [child for node in level for child in node.children]

    projects = _ids(Project, "external_id", sorted({p for p, _, _ in cloud.consumers.values()}))
    users = _ids(User, "external_id", sorted({u for _, u, _ in cloud.consumers.values()}))
    types = _ids(ConsumerType, "name",
                 sorted({t for _, _, t in cloud.consumers.values() if t}))
    uuids = {key: str(uuidlib.uuid4()) for key in cloud.consumers}
    Consumer.objects.bulk_create(
        [Consumer(uuid=uuids[key], project_id=projects[p], user_id=users[u],
                  consumer_type_id=types[t] if t else None, generation=1)
         for key, (p, u, t) in cloud.consumers.items()], batch_size=2000)
    consumer_ids = dict(Consumer.objects.filter(uuid__in=list(uuids.values()))
                        .values_list("uuid", "id"))
    cloud.consumer_uuid = uuids[cloud.consumer_key]

    inventories, tags, links, allocations = [], [], [], []
    for node in nodes:
        for name, spec in node.inventory.items():
            fields = dict(spec) if isinstance(spec, dict) else {"total": spec}
            inventories.append(_inventory(node.obj, rc[name], fields.pop("total"), **fields))
        tags += [ProviderTrait(provider_id=node.obj.id, trait_id=traits[t]) for t in node.traits]
        links += [ProviderAggregate(provider_id=node.obj.id, aggregate_id=aggs[a])
                  for a in node.aggregates]
        allocations += [Allocation(provider_id=node.obj.id, resource_class_id=rc[name],
                                   consumer_id=consumer_ids[uuids[key]], used=used)
                        for key, amounts in node.allocations for name, used in amounts.items()]
    Inventory.objects.bulk_create(inventories, batch_size=5000)
    ProviderTrait.objects.bulk_create(tags, batch_size=5000)
    ProviderAggregate.objects.bulk_create(links, batch_size=5000)
    Allocation.objects.bulk_create(allocations, batch_size=5000)
    return len(nodes)



def pages(cloud):
    """(label, method, url, data) of every page timed."""
    by_name = dict(ResourceProvider.objects.filter(
        name__in=[cloud.big_root, cloud.compute_root]).values_list("name", "uuid"))
    numas = list(ResourceProvider.objects.filter(name__in=cloud.numa_names)
                 .order_by("name").values_list("uuid", flat=True))
    providers, csv = reverse("ui:providers"), reverse("ui:providers-csv")
    candidates, why_not = reverse("ui:candidates"), reverse("ui:why-not")
    return [
        ("dashboard", "get", reverse("ui:dashboard"), None),
        ("providers, page 1 by name", "get", providers, None),
        ("providers, page 3 by name", "get", providers, {"page": 3}),
        ("providers, sorted by usage", "get", providers, {"sort": "-usage"}),
        ("providers, usage of VCPU", "get", providers, {"sort": "-usage", "usage_of": "VCPU"}),
        ("providers, resources + required", "get", providers,
         {"resources": "VCPU:4", "required": "HW_NUMA_ROOT"}),
        ("providers, member_of + !trait", "get", providers,
         {"member_of": AGGS[1], "required": "!HW_CPU_X86_AVX2"}),
        ("providers, over capacity", "get", providers, {"over_capacity": "on"}),
        ("providers, name contains", "get", providers, {"q": "pf1"}),
        ("providers CSV, all", "get", csv, None),
        ("providers CSV, by usage", "get", csv, {"sort": "-usage"}),
        ("subtree fragment of big-0", "get",
         reverse("ui:provider-subtree", args=[by_name[cloud.big_root]]),
         {"start": 1, "fragment": "1"}),
        ("provider page (cn0000)", "get",
         reverse("ui:provider", args=[by_name[cloud.compute_root]]), None),
        ("capacity", "get", reverse("ui:capacity"), None),
        ("capacity ?rc=VCPU", "get", reverse("ui:capacity"), {"rc": "VCPU"}),
        ("status", "get", reverse("ui:status"), None),
        ("resource classes", "get", reverse("ui:resource-classes"), None),
        ("traits", "get", reverse("ui:traits"), None),
        (f"bulk list VCPU ({len(numas)} rows)", "get", reverse("ui:bulk"),
         {"resource_class": "VCPU"}),
        (f"POST bulk preview ({len(numas)})", "post", reverse("ui:bulk-preview"),
         {"resource_class": "VCPU", "provider": numas, "allocation_ratio": "1.0"}),
        ("usages", "get", reverse("ui:usages"), None),
        ("usages CSV", "get", reverse("ui:usages-csv"), None),
        ("consumer page", "get", reverse("ui:consumer", args=[cloud.consumer_uuid]), None),
        ("candidates, page 1", "get", candidates,
         {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39"}),
        ("candidates, page 5", "get", candidates,
         {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39", "page": "5"}),
        ("candidates, granular + sharing", "get", candidates,
         {"q": "resources=MEMORY_MB:512,DISK_GB:50&resources_NET=SRIOV_NET_VF:1"
               "&required_NET=CUSTOM_PHYSNET1&resources_CPU=VCPU:2&group_policy=isolate",
          "version": "1.39"}),
        ("why-not, empty answer", "get", why_not,
         {"q": "resources=VCPU:200,MEMORY_MB:512", "version": "1.39"}),
        ("why-not, traits + aggregate", "get", why_not,
         {"q": "resources=VCPU:1,MEMORY_MB:512,DISK_GB:100&required=HW_CPU_X86_AVX2"
               f"&member_of={SHARED_AGG}", "version": "1.39"}),
        ("why-not, isolate + same_subtree", "get", why_not,
         {"q": "resources_A=SRIOV_NET_VF:4&resources_B=SRIOV_NET_VF:4&required_N=HW_NUMA_ROOT"
               "&group_policy=isolate&same_subtree=_A,_B,_N", "version": "1.39", "page": "3"}),
        ("why-not.json, empty answer", "get", reverse("ui:why-not-json"),
         {"q": "resources=VCPU:200,MEMORY_MB:512", "version": "1.39"}),
    ]


def measure(client, method, url, data, repeat):
    """Warm-up, then `repeat` requests: (status, median wall ms, median CPU ms,
    query counts seen, KiB). A form is posted url-encoded, as a browser does."""
    if method == "post":
        def send():
            return client.post(url, urlencode(data, doseq=True),
                               content_type="application/x-www-form-urlencoded")
    else:
        def send():
            return client.get(url, data or {})
    response = send()
    if response.status_code != 200:
        return response.status_code, None, None, set(), 0
    walls, cpus, counts = [], [], set()
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            wall, cpu = time.perf_counter(), time.thread_time()
            response = send()
            cpus.append((time.thread_time() - cpu) * 1000)
            walls.append((time.perf_counter() - wall) * 1000)
        counts.add(len(queries))
        if response.status_code != 200:
            return response.status_code, None, None, counts, 0
    return (200, statistics.median(walls), statistics.median(cpus), counts,
            len(response.content) / 1024)


class Command(BaseCommand):
    help = ("Build a cloud of N providers in a rolled-back transaction and time every UI page "
            "(see the module docstring).")

    def add_arguments(self, parser):
        parser.add_argument("--providers", type=int, default=1000,
                            help=f"providers to build (at least {MIN_PROVIDERS}; default 1000)")
        parser.add_argument("--repeat", type=int, default=7,
                            help="timed requests per page after one warm-up (default 7)")

    def handle(self, *args, providers, repeat, **options):
        if providers < MIN_PROVIDERS:
            raise CommandError(f"--providers must be at least {MIN_PROVIDERS}, not {providers}")
        if repeat < 1:
            raise CommandError(f"--repeat must be at least 1, not {repeat}")
        if ResourceProvider.objects.exists():
            raise CommandError("providers exist: benchmark_ui builds its own cloud, "
                               "point DATABASE_URL at an empty migrated database")
        failed = []
        request_log = logging.getLogger("placement.request")
        level = request_log.level
        request_log.setLevel(logging.WARNING)
        try:
            failed = self._run(providers, repeat)
        finally:
            request_log.setLevel(level)
        if failed:
            raise CommandError(f"not 200: {', '.join(failed)}")

    def _run(self, providers, repeat):
        """Build, time and print; returns the labels of pages that did not answer 200."""
        failed = []
        with transaction.atomic():
            started = time.perf_counter()
            cloud = plan(providers)
            built = build(cloud)
            _analyze()
            self.stdout.write(f"built {built} providers, {len(cloud.consumers)} consumers in "
                              f"{time.perf_counter() - started:.1f}s ({connection.vendor}); "
                              "rolled back at the end")
            client = Client()
            client.force_login(get_user_model().objects.create_superuser(
                f"benchmark-ui-{uuidlib.uuid4().hex[:8]}", "benchmark@example.invalid", None))
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            self.stdout.write(f"{'page':36} {'status':>6} {'median ms':>10} {'CPU ms':>8} "
                              f"{'queries':>8} {'KiB':>6}  (median of {repeat}; load {load})")
            for label, method, url, data in pages(cloud):
                status, wall, cpu, counts, size = measure(client, method, url, data, repeat)
                queries = "-".join(str(c) for c in sorted({min(counts), max(counts)})) \
                    if counts else "-"
                if status != 200:
                    failed.append(label)
                    self.stdout.write(f"{label:36} {status:>6} {'-':>10} {'-':>8} "
                                      f"{queries:>8} {'-':>6}")
                else:
                    self.stdout.write(f"{label:36} {status:>6} {wall:10.1f} {cpu:8.1f} "
                                      f"{queries:>8} {size:6.0f}")
            transaction.set_rollback(True)
        return failed
