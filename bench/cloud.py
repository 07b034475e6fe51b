"""The synthetic clouds the benchmarks run on, and the one builder that writes them.

A cloud is planned as plain data (trees of Node, and the consumers their allocations
name), then `build` bulk-creates it through the models in one transaction: providers
level by level (a parent needs its id before its children), with the nested-set fields
django-mptt would have written, then inventories, traits, aggregates, consumers and
allocations. Bulk inserts, not the services: the benchmarks measure reads, and 50,000
providers through the services would take far too long.

Shapes:

* `flat(n)` / `nested(n)`: the perf kit's (../shared/perf/load.py) flat compute nodes and
  trees of 7, queried by QUERIES;
* `operator_cloud(n)`: a mixed cloud for the operator UI's pages (bench/ui.py);
* `pci(hosts, devices)`, `vgpu(hosts)`, `sriov(hosts)`: wide, symmetric device trees
  (bench/devices.py).

`build_over_api` writes the same cloud to a live server through the HTTP API (ours or
Placement 16.0.0), one request per write; `wipe_over_api` empties one.
"""
import http.client
import json
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urlparse

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from bench import BenchError
from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from providers.models import (
    Aggregate,
    ChangeRecord,
    Inventory,
    ProviderAggregate,
    ProviderTrait,
    ResourceClass,
    ResourceProvider,
    Trait,
)

FLAT_AGGREGATES = [
    "14a5c8a3-5a99-4e8f-88be-00d85fcb1c17",
    "66d98e7c-3c25-485d-a0dc-1cea651884de",
    "a59dbb28-fd98-4c6e-9ec5-ae5f3d04b0aa",
]
FLAT_TRAITS = ["HW_CPU_X86_AVX2", "HW_CPU_X86_SSE2", "STORAGE_DISK_SSD"]
# The perf kit's canonical GET /allocation_candidates query of each shape.
QUERIES = {
    "flat": ("resources=VCPU:1,DISK_GB:10,MEMORY_MB:256"
             f"&member_of={FLAT_AGGREGATES[0]}&required=HW_CPU_X86_AVX2"),
    "nested": ("resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH"
               "&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO"
               "&resources_FPGA=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_FPGA"),
}
OPERATOR_MIN_PROVIDERS = 20
OPERATOR_AGGREGATES = [f"00000000-0000-0000-0000-{i:012d}" for i in range(10)]
OPERATOR_SHARED_AGGREGATE = "a0000000-0000-0000-0000-00000000000a"


@dataclass
class Node:
    """One provider to build: inventory {"VCPU": 8 or {"total": 8, ...}}, children.
    Without a name the provider is named by its uuid."""
    name: str = None
    inventory: dict = field(default_factory=dict)
    traits: list = field(default_factory=list)
    aggregates: list = field(default_factory=list)
    children: list = field(default_factory=list)
    allocations: list = field(default_factory=list)   # [(consumer key, {rc: used})]
    uuid: str = field(default_factory=lambda: str(uuidlib.uuid4()))
    # set by build: the tree's place, then the row's id
    parent: "Node" = field(default=None, repr=False)
    root: "Node" = field(default=None, repr=False)
    tree_id: int = None
    lft: int = None
    rght: int = None
    level: int = None
    id: int = None


@dataclass
class Cloud:
    """The trees, and the consumers (key -> (project, user, consumer type or None))."""
    trees: list
    consumers: dict = field(default_factory=dict)
    consumer_uuids: dict = field(default_factory=dict)   # key -> uuid, once built


@dataclass
class OperatorCloud(Cloud):
    """The operator cloud, with the names its pages ask for."""
    big_root: str = ""
    compute_root: str = ""
    numa_names: list = field(default_factory=list)
    consumer_key: str = ""
    sharing_root: str = ""


def flat(count):
    """`count` compute nodes (VCPU 32 max 16, MEMORY_MB 8192 min 128, DISK_GB 8192 min 5),
    in one to three of FLAT_AGGREGATES and with one to three of FLAT_TRAITS, so that every
    node has the first aggregate and HW_CPU_X86_AVX2."""
    return Cloud([Node(inventory={"VCPU": {"total": 32, "max_unit": 16},
                                  "MEMORY_MB": {"total": 8192, "min_unit": 128,
                                                "max_unit": 8192},
                                  "DISK_GB": {"total": 8192, "min_unit": 5, "max_unit": 8192}},
                       aggregates=FLAT_AGGREGATES[:i % 3 + 1],
                       traits=FLAT_TRAITS[:(i // 3) % 3 + 1])
                  for i in range(count)])


def nested(count):
    """`count` trees of 7: compute node (DISK_GB) -> 2 NUMA nodes (VCPU, MEMORY_MB) ->
    an FPGA and a PGPU (VGPU 8) under the first, two FPGAs under the second."""
    def tree():
        root = Node(inventory={"DISK_GB": 20480}, traits=["COMPUTE_VOLUME_MULTI_ATTACH"])
        numa0 = Node(f"numa0 {root.uuid}",
                     {"VCPU": {"total": 4, "reserved": 2},
                      "MEMORY_MB": {"total": 2048, "min_unit": 512, "step_size": 256}},
                     traits=["HW_NUMA_ROOT"])
        numa1 = Node(f"numa1 {root.uuid}",
                     {"VCPU": 4, "MEMORY_MB": {"total": 2048, "min_unit": 256,
                                               "max_unit": 1024}},
                     traits=["HW_NUMA_ROOT", "CUSTOM_FOO"])
        numa0.children = [Node(f"fpga0-0 {root.uuid}", {"FPGA": 1}),
                          Node(f"pgpu0-0 {root.uuid}", {"VGPU": 8})]
        numa1.children = [Node(f"fpga1-0 {root.uuid}", {"FPGA": 1}),
                          Node(f"fpga1-1 {root.uuid}", {"FPGA": 1})]
        root.children = [numa0, numa1]
        return root

    return Cloud([tree() for _ in range(count)])


SHAPES = {"flat": flat, "nested": nested}


def operator_cloud(providers, consumers=None):
    """A cloud of `providers` (at least OPERATOR_MIN_PROVIDERS) providers; for 1,000:

    * two big trees of 200 (root, 3 NUMA sockets, 196 CUSTOM_DEV devices, every third
      device allocated): the provider list's folding and "more" fragments;
    * 110 compute trees of 5 (root with MEMORY_MB/DISK_GB, rack trait, one of ten
      aggregates, AVX2 on odd ones; two NUMA nodes with VCPU at ratio 4; two PFs with
      SRIOV_NET_VF and CUSTOM_PHYSNET1/2), two consumers each (20 projects, 50 users,
      half of type INSTANCE): capacity, bulk edit, usages, candidates;
    * 10 sharing disk providers (MISC_SHARES_VIA_AGGREGATE) in the compute trees' shared
      aggregate: granular and sharing candidates;
    * 40 flat hosts, one consumer each, some over capacity: the "over capacity" filter
      and the status checks.

    That makes about 0.4 consumers per provider. `consumers`, if more, adds small
    instances (1 VCPU, 1 GiB, and 1 DISK_GB on the first sharing provider where the
    tree is in its aggregate) round-robin over the compute trees until there are that
    many, spread over 100 projects and 997 users: the consumers list, usages, a
    provider holding thousands of consumers and the admin pages at the issue's
    3,000 providers / 3,000 consumers.
    """
    aggs, shared_agg = OPERATOR_AGGREGATES, OPERATOR_SHARED_AGGREGATE
    cloud = OperatorCloud([])
    trees, planned = cloud.trees, cloud.consumers
    big_size = max(4, providers // 5)
    sharing = max(1, providers // 100)
    flat_min = max(1, providers // 25)
    compute = (providers - 2 * big_size - sharing - flat_min) // 5
    flat_hosts = providers - 2 * big_size - sharing - 5 * compute
    computes = []
    for t in range(2):
        root = Node(f"big-{t}", {"MEMORY_MB": 65536, "VCPU": 64}, aggregates=aggs[:1])
        devices = big_size - 4
        for s in range(3):
            socket = Node(f"big-{t}-s{s}", {"VCPU": 32}, traits=["HW_NUMA_ROOT"])
            for d in range(devices // 3 + (1 if s < devices % 3 else 0)):
                device = Node(f"big-{t}-s{s}-d{d}", {"CUSTOM_DEV": 1})
                if d % 3 == 0:
                    key = f"dev-{t}-{s}-{d}"
                    planned[key] = ("project-devices", "user-devices", None)
                    device.allocations.append((key, {"CUSTOM_DEV": 1}))
                socket.children.append(device)
            root.children.append(socket)
        trees.append(root)
    for t in range(compute):
        root = Node(f"cn{t:04d}",
                    {"MEMORY_MB": {"total": 262144, "reserved": 4096}, "DISK_GB": 2000},
                    traits=[f"CUSTOM_RACK_{t % 10}"] + (["HW_CPU_X86_AVX2"] if t % 2 else []),
                    aggregates=[aggs[t % 10]] + ([shared_agg] if t % 3 else []))
        numas = [Node(f"cn{t:04d}-numa{n}", {"VCPU": {"total": 32, "allocation_ratio": 4.0}},
                      traits=["HW_NUMA_ROOT"]) for n in range(2)]
        pfs = [Node(f"cn{t:04d}-pf{p}", {"SRIOV_NET_VF": 8}, traits=[f"CUSTOM_PHYSNET{p + 1}"])
               for p in range(2)]
        root.children = numas + pfs
        cloud.numa_names += [n.name for n in numas]
        for c in range(2):
            key = f"vm-{t}-{c}"
            planned[key] = (f"project-{t % 20}", f"user-{t % 50}", "INSTANCE" if c else None)
            numas[c].allocations.append((key, {"VCPU": 8 + (t * 7 + c * 13) % 120}))
            root.allocations.append((key, {"MEMORY_MB": 16384 * (1 + t % 8), "DISK_GB": 40}))
        trees.append(root)
        computes.append(root)
    disks = [Node(f"shared-disk{i:02d}", {"DISK_GB": 10000},
                  traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[shared_agg])
             for i in range(sharing)]
    trees += disks
    for i in range(flat_hosts):
        key = f"flat-{i}"
        planned[key] = (f"project-{i % 20}", f"user-{i % 50}", "INSTANCE")
        # (i % 9) * 2 + 1 of 16 VCPU: every ninth host is over capacity (17 of 16)
        trees.append(Node(f"flat{i:03d}", {"VCPU": 16, "MEMORY_MB": 32768, "DISK_GB": 500},
                          aggregates=[aggs[i % 10]],
                          allocations=[(key, {"VCPU": (i % 9) * 2 + 1, "MEMORY_MB": 2048})]))
    for i in range(max(0, (consumers or 0) - len(planned))):
        root = computes[i % len(computes)]
        key = f"small-{i}"
        planned[key] = (f"project-{i % 100}", f"user-{i % 997}", "INSTANCE" if i % 2 else None)
        root.children[i // len(computes) % 2].allocations.append((key, {"VCPU": 1}))
        root.allocations.append((key, {"MEMORY_MB": 1024}))
        if i % len(computes) % 3:   # the tree is in the shared aggregate: disk from there
            disks[0].allocations.append((key, {"DISK_GB": 1}))
    cloud.big_root, cloud.compute_root, cloud.consumer_key = "big-0", "cn0000", "vm-0-0"
    cloud.sharing_root = disks[0].name
    return cloud


PCI_CLASS = "CUSTOM_PCI_10DE_20B5"
PCI_TRAITS = ["CUSTOM_GPU_A", "CUSTOM_GPU_B"]


def pci(hosts, devices):
    """`hosts` compute nodes (VCPU 64, MEMORY_MB 262144), each with `devices` PCI devices as
    nova reports them: one child provider per device, capacity 1 of PCI_CLASS, the even
    devices with PCI_TRAITS[0], the odd ones with PCI_TRAITS[1]."""
    return Cloud([Node(inventory={"VCPU": 64, "MEMORY_MB": 262144},
                       children=[Node(inventory={PCI_CLASS: 1}, traits=[PCI_TRAITS[i % 2]])
                                 for i in range(devices)])
                  for _ in range(hosts)])


def vgpu(hosts):
    """`hosts` compute nodes, each with 4 physical GPUs of VGPU 16 (max_unit 16)."""
    return Cloud([Node(inventory={"VCPU": 64, "MEMORY_MB": 262144},
                       children=[Node(inventory={"VGPU": {"total": 16, "max_unit": 16}},
                                      traits=["CUSTOM_PGPU"]) for _ in range(4)])
                  for _ in range(hosts)])


def sriov(hosts):
    """`hosts` compute nodes -> 2 NUMA nodes (VCPU 32, MEMORY_MB 131072) -> 4 physical
    functions each (SRIOV_NET_VF 8, on physnet A)."""
    def numa():
        return Node(inventory={"VCPU": 32, "MEMORY_MB": 131072}, traits=["HW_NUMA_ROOT"],
                    children=[Node(inventory={"SRIOV_NET_VF": 8},
                                   traits=["CUSTOM_PHYSNET_A"]) for _ in range(4)])
    return Cloud([Node(inventory={"DISK_GB": 1000}, children=[numa(), numa()])
                  for _ in range(hosts)])


def walk(node):
    """`node` and its descendants, depth first."""
    yield node
    for child in node.children:
        yield from walk(child)


@transaction.atomic
def build(cloud):
    """Bulk-create the planned cloud (see the module docstring); sets each Node's id and
    cloud.consumer_uuids. Returns the number of providers."""
    nodes = [node for tree in cloud.trees for node in walk(tree)]
    rc = _ids(ResourceClass, "name", sorted({name for n in nodes for name in n.inventory}))
    traits = _ids(Trait, "name", sorted({t for n in nodes for t in n.traits}))
    aggs = _ids(Aggregate, "uuid", sorted({a for n in nodes for a in n.aggregates}))
    _create_providers(cloud.trees)

    values = cloud.consumers.values()
    projects = _ids(Project, "external_id", sorted({p for p, _, _ in values}))
    users = _ids(User, "external_id", sorted({u for _, u, _ in values}))
    types = _ids(ConsumerType, "name", sorted({t for _, _, t in values if t}))
    uuids = cloud.consumer_uuids = {key: str(uuidlib.uuid4()) for key in cloud.consumers}
    Consumer.objects.bulk_create(
        [Consumer(uuid=uuids[key], project_id=projects[p], user_id=users[u],
                  consumer_type_id=types[t] if t else None, generation=1)
         for key, (p, u, t) in cloud.consumers.items()], batch_size=2000)
    consumer_ids = dict(Consumer.objects.filter(uuid__in=list(uuids.values()))
                        .values_list("uuid", "id")) if uuids else {}

    inventories, tags, links, allocations = [], [], [], []
    for node in nodes:
        for name, spec in node.inventory.items():
            fields = dict(spec) if isinstance(spec, dict) else {"total": spec}
            inventories.append(Inventory(provider_id=node.id, resource_class_id=rc[name],
                                         **fields))
        tags += [ProviderTrait(provider_id=node.id, trait_id=traits[t]) for t in node.traits]
        links += [ProviderAggregate(provider_id=node.id, aggregate_id=aggs[a])
                  for a in node.aggregates]
        allocations += [Allocation(provider_id=node.id, resource_class_id=rc[name],
                                   consumer_id=consumer_ids[uuids[key]], used=used)
                        for key, amounts in node.allocations for name, used in amounts.items()]
    Inventory.objects.bulk_create(inventories, batch_size=5000)
    ProviderTrait.objects.bulk_create(tags, batch_size=5000)
    ProviderAggregate.objects.bulk_create(links, batch_size=5000)
    Allocation.objects.bulk_create(allocations, batch_size=5000)
    return len(nodes)


def _create_providers(trees):
    """Providers level by level, each tree numbered as django-mptt numbers it."""
    first_tree_id = (ResourceProvider.objects.order_by("-tree_id")
                     .values_list("tree_id", flat=True).first() or 0) + 1
    for offset, tree in enumerate(trees):
        _number(tree, 1, 0)
        for node in walk(tree):
            node.root, node.tree_id = tree, first_tree_id + offset
            for child in node.children:
                child.parent = node
    level = list(trees)
    while level:
        objs = [ResourceProvider(uuid=n.uuid, name=n.name or n.uuid, tree_id=n.tree_id,
                                 lft=n.lft, rght=n.rght, level=n.level,
                                 parent_id=n.parent.id if n.parent else None,
                                 root_id=n.root.id if n.parent else None)
                for n in level]
        ResourceProvider.objects.bulk_create(objs, batch_size=2000)
        if any(obj.pk is None for obj in objs):   # backends that do not return ids
            by_uuid = dict(ResourceProvider.objects.filter(
                uuid__in=[o.uuid for o in objs]).values_list("uuid", "id"))
            for obj in objs:
                obj.pk = by_uuid[obj.uuid]
        for node, obj in zip(level, objs):
            node.id = obj.pk
        if level[0].parent is None:   # roots point at themselves
            ResourceProvider.objects.filter(id__in=[o.pk for o in objs]).update(root=F("id"))
        level = [child for node in level for child in node.children]


def _number(node, lft, level):
    """Nested-set fields of `node`'s subtree from `lft`; returns the next free number."""
    node.lft, node.level = lft, level
    nxt = lft + 1
    for child in node.children:
        nxt = _number(child, nxt, level + 1)
    node.rght = nxt
    return nxt + 1


def _ids(model, field_name, names):
    """{name: id} of `model` rows, creating the missing ones."""
    if not names:
        return {}
    existing = dict(model.objects.filter(**{f"{field_name}__in": names})
                    .values_list(field_name, "id"))
    if any(n not in existing for n in names):
        model.objects.bulk_create([model(**{field_name: n}) for n in names if n not in existing],
                                  ignore_conflicts=True)
        existing = dict(model.objects.filter(**{f"{field_name}__in": names})
                        .values_list(field_name, "id"))
    return existing


def history(cloud, days=30):
    """Bulk-create the change log a cloud built through the services would have: per
    provider its create and inventories entries, per consumer its allocations entry
    and one for each provider it holds on, spread over the last `days` days, oldest
    first. Returns the number of entries. (The benchmarks' clouds are bulk-built, so
    without this the change log pages would read an empty table.)"""
    nodes = [node for tree in cloud.trees for node in walk(tree)]
    entries = []
    for node in nodes:
        entries.append((ChangeRecord.KIND_PROVIDER, node.uuid, "create", None,
                        {"name": node.name or node.uuid,
                         "parent": node.parent.uuid if node.parent else None, "generation": 0}))
        entries.append((ChangeRecord.KIND_PROVIDER, node.uuid, "inventories",
                        {"generation": 0, "inventories": {}},
                        {"generation": 1, "inventories": {
                            name: dict(spec) if isinstance(spec, dict) else {"total": spec}
                            for name, spec in node.inventory.items()}}))
    held = {}   # consumer key -> {provider uuid: {class: used}}
    for node in nodes:
        for key, amounts in node.allocations:
            held.setdefault(key, {})[node.uuid] = dict(amounts)
    for key, allocations in held.items():
        uuid = cloud.consumer_uuids[key]
        project, user, consumer_type = cloud.consumers[key]
        after = {"generation": 1, "project": project, "user": user, "allocations": allocations}
        if consumer_type:
            after["consumer_type"] = consumer_type
        entries.append((ChangeRecord.KIND_CONSUMER, uuid, "allocations", None, after))
        entries += [(ChangeRecord.KIND_PROVIDER, rp_uuid, "allocations", {"consumers": {}},
                     {"consumers": {uuid: resources}})
                    for rp_uuid, resources in allocations.items()]
    start, step = timezone.now() - timedelta(days=days), timedelta(days=days) / len(entries)
    ChangeRecord.objects.bulk_create(
        [ChangeRecord(kind=kind, entity=entity, action=action, before=before, after=after,
                      actor="command:bench", created_at=start + i * step)
         for i, (kind, entity, action, before, after) in enumerate(entries)], batch_size=2000)
    return len(entries)


LOADED_TABLES = ("resource_providers", "inventories", "allocations", "consumers",
                 "resource_provider_traits", "resource_provider_aggregates")


def analyze():
    """Fresh bulk-loaded tables: refresh planner statistics as autovacuum would."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and not connection.in_atomic_block:
            # the tables loaded, not the whole database: its shared catalogs wait on
            # other databases' sessions, past the service's lock_timeout on a busy server
            cursor.execute("VACUUM ANALYZE " + ", ".join(LOADED_TABLES))
        elif connection.vendor == "mysql":
            if connection.in_atomic_block:   # ANALYZE TABLE would commit the transaction
                return
            cursor.execute("ANALYZE TABLE " + ", ".join(LOADED_TABLES))
            cursor.fetchall()
        else:   # SQLite, or inside a transaction (tests), where VACUUM cannot run
            cursor.execute("ANALYZE")


def wipe():
    """Delete every allocation, consumer and provider (never on a database you care about)."""
    with transaction.atomic():
        Allocation.objects.all().delete()
        Consumer.objects.all().delete()
        ProviderTrait.objects.all().delete()
        ProviderAggregate.objects.all().delete()
        Inventory.objects.all().delete()
        ResourceProvider.objects.update(parent=None)
        ResourceProvider.objects.all().delete()


# --- the same clouds through the HTTP API ----------------------------------------------
# For a live server, ours or Placement 16.0.0 (which has no bulk loader of ours): one
# request per provider and per write, as a client would make them; slower than build()
# but the same cloud on either service.

# parents, generations back from every write; 1.38 when a consumer has a type to send
API_VERSION = "placement 1.37"


class ApiError(BenchError):
    """A live server refused a write of the cloud: one line, method, path and status."""


class Api:
    """One keep-alive connection to a live server: call(method, path, body) -> JSON."""

    def __init__(self, url, token="admin", timeout=600):
        parsed = urlparse(url)
        self.url, self.prefix, self.timeout = url, parsed.path.rstrip("/"), timeout
        self.host, self.port, self.token = parsed.hostname, parsed.port or 80, token
        self.conn = None

    def call(self, method, path, body=None, version=API_VERSION, ok=(200, 201, 204)):
        status, content = self.exchange(method, path, body, version)
        if status not in ok:
            raise ApiError(f"{self.url}: {method} {path}: HTTP {status} "
                           f"{content[:200].decode(errors='replace')}")
        return json.loads(content) if content else None

    def exchange(self, method, path, body=None, version=API_VERSION):
        """(status, the answer's bytes), whatever the status."""
        headers = {"x-auth-token": self.token, "openstack-api-version": version,
                   "accept": "application/json"}
        payload = None
        if body is not None:
            payload = json.dumps(body)
            headers["content-type"] = "application/json"
        for attempt in (1, 2):   # a keep-alive connection the server closed: once more
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port,
                                                       timeout=self.timeout)
            try:
                self.conn.request(method, self.prefix + path, body=payload, headers=headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, OSError) as exc:
                self.close()
                if attempt == 2:
                    raise ApiError(f"{self.url}: {method} {path}: {exc}") from exc

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def build_over_api(cloud, url):
    """Create the planned cloud on the live server at `url` through its API: custom
    resource classes and traits, providers parents first (uuid and name as planned) with
    their inventories, traits and aggregates, then each consumer's allocations. Returns
    the number of providers."""
    api = Api(url)
    try:
        nodes = [node for tree in cloud.trees for node in walk(tree)]
        for name in sorted({name for n in nodes for name in n.inventory}):
            if name.startswith("CUSTOM_"):
                api.call("PUT", f"/resource_classes/{name}")
        for name in sorted({t for n in nodes for t in n.traits}):
            if name.startswith("CUSTOM_"):
                api.call("PUT", f"/traits/{name}")
        for tree in cloud.trees:
            for node in walk(tree):
                for child in node.children:
                    child.parent = node
                _create_over_api(api, node)
        held = {}   # consumer key -> {provider uuid: {class: used}}
        for node in nodes:
            for key, amounts in node.allocations:
                held.setdefault(key, {})[node.uuid] = dict(amounts)
        cloud.consumer_uuids = {key: str(uuidlib.uuid4()) for key in cloud.consumers}
        for key, allocations in held.items():
            project, user, consumer_type = cloud.consumers[key]
            body = {"allocations": {rp: {"resources": resources}
                                    for rp, resources in allocations.items()},
                    "project_id": project, "user_id": user, "consumer_generation": None}
            version = API_VERSION
            if consumer_type:
                body["consumer_type"], version = consumer_type, "placement 1.38"
            api.call("PUT", f"/allocations/{cloud.consumer_uuids[key]}", body, version)
        return len(nodes)
    finally:
        api.close()


def _create_over_api(api, node):
    parent = node.parent.uuid if node.parent else None
    created = api.call("POST", "/resource_providers", {
        "uuid": node.uuid, "name": node.name or node.uuid, "parent_provider_uuid": parent})
    generation, path = created["generation"], f"/resource_providers/{node.uuid}"
    if node.inventory:
        generation = api.call("PUT", f"{path}/inventories", {
            "resource_provider_generation": generation,
            "inventories": {name: dict(spec) if isinstance(spec, dict) else {"total": spec}
                            for name, spec in node.inventory.items()},
        })["resource_provider_generation"]
    if node.traits:
        generation = api.call("PUT", f"{path}/traits", {
            "resource_provider_generation": generation, "traits": sorted(node.traits),
        })["resource_provider_generation"]
    if node.aggregates:
        api.call("PUT", f"{path}/aggregates", {
            "resource_provider_generation": generation, "aggregates": sorted(node.aggregates)})


def wipe_over_api(url):
    """Delete every allocation and provider of the live server at `url` through its API
    (never one you care about): each consumer holding something, then the providers,
    deepest first (a provider with children cannot be deleted)."""
    api = Api(url)
    try:
        providers = api.call("GET", "/resource_providers")["resource_providers"]
        consumers = set()
        for provider in providers:
            found = api.call("GET", f"/resource_providers/{provider['uuid']}/allocations")
            consumers.update(found["allocations"])
        for consumer in sorted(consumers):
            api.call("DELETE", f"/allocations/{consumer}", ok=(204, 404))
        parent = {p["uuid"]: p["parent_provider_uuid"] for p in providers}

        def depth(uuid):
            return 0 if parent[uuid] is None else depth(parent[uuid]) + 1
        for uuid in sorted(parent, key=depth, reverse=True):
            api.call("DELETE", f"/resource_providers/{uuid}", ok=(204, 404))
        return len(providers)
    finally:
        api.close()
