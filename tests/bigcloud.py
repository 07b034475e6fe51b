"""A cloud of thousands of providers and consumers, bulk-inserted in a second or two.

For the UI tests at scale (issue 35: pages that must stay readable and bounded at
3,000 providers / 3,000 consumers). Rows go straight in through bulk_create, not
through the services (tests/factories.py), because 3,000 providers through the
services take minutes; every row is one the services would accept (usage within
capacity except where said).

The cloud (``build_cloud(providers=N, consumers=M)``):

* ``uuid_trees`` trees whose root is named by its uuid, as Ironic nodes or agents
  register themselves (they sort before real host names), with a child;
* compute hosts ``cmp-NNNN.dc1.example.net``: VCPU 64 at ratio 4, MEMORY_MB 262144
  (reserved 4096), DISK_GB 2000; odd ones have HW_CPU_X86_AVX2; every host is in one
  of ten aggregates AGGS; every fifth host is nearly full of memory;
* ``sharing`` sharing disk providers ``shared-disk-NN`` (DISK_GB 100000) in SHARED_AGG,
  with the first third of the hosts;
* consumers spread over 100 projects, 997 users (about 2,800
  (project, user, type) groups at 3,000 consumers), half of type INSTANCE, each holding
  VCPU and MEMORY_MB on one host (and DISK_GB on a sharing provider for every
  fourth).

Returns a BigCloud naming what tests look for.
"""
import uuid as uuidlib
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from providers.models import (
    Aggregate, Inventory, ProviderAggregate, ProviderTrait, ResourceClass, ResourceProvider,
    Trait,
)

AGGS = [f"00000000-0000-0000-0000-{i:012d}" for i in range(10)]
SHARED_AGG = "a0000000-0000-0000-0000-00000000000a"
HOST_VCPU, HOST_MEMORY, HOST_DISK = 64, 262144, 2000
USERS = 997                   # prime: a user's consumers spread over projects and types
NEARLY_FULL_MEMORY = 250000   # used on every fifth host: 8,048 MB left


@dataclass
class BigCloud:
    hosts: list = field(default_factory=list)        # ResourceProvider, by name
    uuid_roots: list = field(default_factory=list)
    sharing: list = field(default_factory=list)
    consumers: list = field(default_factory=list)    # uuids
    providers: int = 0


def host_name(i):
    return f"cmp-{i:04d}.dc1.example.net"


def _ids(model, key, values):
    model.objects.bulk_create([model(**{key: v}) for v in values], ignore_conflicts=True)
    return dict(model.objects.filter(**{f"{key}__in": values}).values_list(key, "id"))


def _providers(rows, tree_id):
    """Bulk-create providers from (name, uuid, parent or None); each root starts a tree."""
    objs = []
    for name, uuid, parent in rows:
        if parent is None:
            tree_id += 1
            objs.append(ResourceProvider(uuid=uuid, name=name, tree_id=tree_id, lft=1, rght=2,
                                         level=0))
        else:   # a single child: the parent's bounds become 1..4
            objs.append(ResourceProvider(uuid=uuid, name=name, tree_id=parent.tree_id, lft=2,
                                         rght=3, level=1, parent_id=parent.id,
                                         root_id=parent.id))
    ResourceProvider.objects.bulk_create(objs, batch_size=2000)
    by_uuid = dict(ResourceProvider.objects.filter(uuid__in=[o.uuid for o in objs])
                   .values_list("uuid", "id"))
    for obj in objs:
        obj.id = obj.pk = by_uuid[obj.uuid]
    return objs, tree_id


@transaction.atomic
def build_cloud(providers=3000, consumers=3000, uuid_trees=40, sharing=10):
    rc = _ids(ResourceClass, "name", ["VCPU", "MEMORY_MB", "DISK_GB", "CUSTOM_BAREMETAL"])
    traits = _ids(Trait, "name", ["HW_CPU_X86_AVX2", "MISC_SHARES_VIA_AGGREGATE"])
    aggs = _ids(Aggregate, "uuid", AGGS + [SHARED_AGG])
    last_tree = (ResourceProvider.objects.order_by("-tree_id")
                 .values_list("tree_id", flat=True).first() or 0)
    hosts = providers - 2 * uuid_trees - sharing
    rows = ([(host_name(i), str(uuidlib.uuid4()), None) for i in range(hosts)]
            + [(f"shared-disk-{i:02d}", str(uuidlib.uuid4()), None) for i in range(sharing)])
    uuid_roots = [str(uuidlib.uuid4()) for _ in range(uuid_trees)]
    rows += [(u, u, None) for u in uuid_roots]
    roots, last_tree = _providers(rows, last_tree)
    ResourceProvider.objects.filter(id__in=[r.id for r in roots]).update(root=F("id"))
    host_objs, disk_objs, uuid_objs = roots[:hosts], roots[hosts:hosts + sharing], \
        roots[hosts + sharing:]
    children, _ = _providers([(f"{r.name}-agent", str(uuidlib.uuid4()), r) for r in uuid_objs],
                             last_tree)
    ResourceProvider.objects.filter(id__in=[r.id for r in uuid_objs]).update(rght=4)

    inventories, tags, links = [], [], []
    for i, host in enumerate(host_objs):
        inventories += [
            Inventory(provider_id=host.id, resource_class_id=rc["VCPU"], total=HOST_VCPU,
                      allocation_ratio=4.0),
            Inventory(provider_id=host.id, resource_class_id=rc["MEMORY_MB"], total=HOST_MEMORY,
                      reserved=4096),
            Inventory(provider_id=host.id, resource_class_id=rc["DISK_GB"], total=HOST_DISK)]
        if i % 2:
            tags.append(ProviderTrait(provider_id=host.id, trait_id=traits["HW_CPU_X86_AVX2"]))
        links.append(ProviderAggregate(provider_id=host.id, aggregate_id=aggs[AGGS[i % 10]]))
        if i < hosts // 3:
            links.append(ProviderAggregate(provider_id=host.id, aggregate_id=aggs[SHARED_AGG]))
    for disk in disk_objs:
        inventories.append(Inventory(provider_id=disk.id, resource_class_id=rc["DISK_GB"],
                                     total=100000))
        tags.append(ProviderTrait(provider_id=disk.id,
                                  trait_id=traits["MISC_SHARES_VIA_AGGREGATE"]))
        links.append(ProviderAggregate(provider_id=disk.id, aggregate_id=aggs[SHARED_AGG]))
    for root, child in zip(uuid_objs, children):
        inventories += [
            Inventory(provider_id=root.id, resource_class_id=rc["VCPU"], total=HOST_VCPU),
            Inventory(provider_id=root.id, resource_class_id=rc["MEMORY_MB"], total=HOST_MEMORY),
            Inventory(provider_id=child.id, resource_class_id=rc["CUSTOM_BAREMETAL"], total=1)]
    Inventory.objects.bulk_create(inventories, batch_size=5000)
    ProviderTrait.objects.bulk_create(tags, batch_size=5000)
    ProviderAggregate.objects.bulk_create(links, batch_size=5000)

    projects = _ids(Project, "external_id", [f"project-{i:03d}" for i in range(100)])
    users = _ids(User, "external_id", [f"user-{i:03d}" for i in range(USERS)])
    instance = _ids(ConsumerType, "name", ["INSTANCE"])["INSTANCE"]
    uuids = [str(uuidlib.uuid4()) for _ in range(consumers)]
    Consumer.objects.bulk_create(
        [Consumer(uuid=u, project_id=projects[f"project-{i % 100:03d}"],
                  user_id=users[f"user-{i % USERS:03d}"],
                  consumer_type_id=instance if i % 2 else None, generation=1)
         for i, u in enumerate(uuids)], batch_size=2000)
    consumer_ids = dict(Consumer.objects.filter(uuid__in=uuids).values_list("uuid", "id"))
    allocations = []
    for i, u in enumerate(uuids):
        host = host_objs[i % hosts]
        allocations += [
            Allocation(provider_id=host.id, consumer_id=consumer_ids[u],
                       resource_class_id=rc["VCPU"], used=1 + i % 8),
            Allocation(provider_id=host.id, consumer_id=consumer_ids[u],
                       resource_class_id=rc["MEMORY_MB"], used=2048)]
        if i % 4 == 0:
            allocations.append(Allocation(provider_id=disk_objs[i % sharing].id,
                                          consumer_id=consumer_ids[u],
                                          resource_class_id=rc["DISK_GB"], used=40))
    # every fifth host nearly full of memory: one extra consumer per such host
    fillers = {i: str(uuidlib.uuid4()) for i in range(0, hosts, 5)}
    Consumer.objects.bulk_create(
        [Consumer(uuid=u, project_id=projects["project-000"], user_id=users["user-000"],
                  generation=1) for u in fillers.values()], batch_size=2000)
    filler_ids = dict(Consumer.objects.filter(uuid__in=list(fillers.values()))
                      .values_list("uuid", "id"))
    allocations += [Allocation(provider_id=host_objs[i].id, consumer_id=filler_ids[u],
                               resource_class_id=rc["MEMORY_MB"], used=NEARLY_FULL_MEMORY
                               - 2048 * len(range(i, consumers, hosts)))
                    for i, u in fillers.items()]
    Allocation.objects.bulk_create(allocations, batch_size=5000)
    return BigCloud(hosts=host_objs, uuid_roots=uuid_objs, sharing=disk_objs,
                    consumers=uuids, providers=len(roots) + len(children))
