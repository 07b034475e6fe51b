"""bench/cloud.py: each shape has the size asked for, and the bulk-built trees are what
django-mptt and the services would have written."""
import pytest

from allocations.models import Allocation, Consumer
from bench import cloud
from providers.models import ChangeRecord, Inventory, ResourceProvider
from tests.providers.tree_checks import assert_tree_integrity


def _size(planned):
    return sum(1 for tree in planned.trees for _ in cloud.walk(tree))


def test_each_shape_has_the_asked_size():
    assert _size(cloud.flat(5)) == 5
    assert _size(cloud.nested(3)) == 3 * 7
    for providers in (20, 25, 1000, 1234):
        assert _size(cloud.operator_cloud(providers)) == providers


@pytest.mark.django_db
@pytest.mark.parametrize("planned, providers", [
    (lambda: cloud.flat(4), 4),
    (lambda: cloud.nested(3), 21),
    (lambda: cloud.operator_cloud(40), 40),
])
def test_built_trees_are_consistent(planned, providers):
    """Nested-set fields, roots and parents as django-mptt would have written them."""
    make = planned()
    assert cloud.build(make) == providers
    assert ResourceProvider.objects.count() == providers
    assert_tree_integrity()
    for tree in make.trees:
        for node in cloud.walk(tree):
            row = ResourceProvider.objects.get(uuid=node.uuid)
            assert row.root_id == tree.id
            assert row.parent_id == (node.parent.id if node.parent else None)


@pytest.mark.django_db
def test_a_second_cloud_goes_beside_the_first():
    cloud.build(cloud.nested(2))
    cloud.build(cloud.flat(3))
    assert ResourceProvider.objects.filter(parent=None).count() == 5
    assert_tree_integrity()


@pytest.mark.django_db
def test_inventories_and_allocations_are_the_planned_ones():
    planned = cloud.operator_cloud(25)
    cloud.build(planned)
    nodes = [node for tree in planned.trees for node in cloud.walk(tree)]
    assert Inventory.objects.count() == sum(len(node.inventory) for node in nodes)
    assert Consumer.objects.count() == len(planned.consumers)
    assert Allocation.objects.count() == sum(len(amounts) for node in nodes
                                             for _, amounts in node.allocations)
    numa = Inventory.objects.get(provider__name="cn0000-numa0",
                                 resource_class__name="VCPU")
    assert (numa.total, numa.allocation_ratio) == (32, 4.0)


@pytest.mark.django_db
def test_wipe_leaves_no_provider_or_consumer():
    cloud.build(cloud.operator_cloud(20))
    cloud.wipe()
    assert not ResourceProvider.objects.exists() and not Consumer.objects.exists()


@pytest.mark.django_db
def test_operator_cloud_adds_consumers_up_to_the_asked_number():
    natural = len(cloud.operator_cloud(40).consumers)
    planned = cloud.operator_cloud(40, consumers=natural + 30)
    assert _size(planned) == 40 and len(planned.consumers) == natural + 30
    cloud.build(planned)
    assert Consumer.objects.count() == natural + 30
    disk = ResourceProvider.objects.get(name=planned.sharing_root)
    # the added instances on trees in the shared aggregate take their disk from it
    assert Allocation.objects.filter(provider=disk).count() > 10
    assert len(cloud.operator_cloud(40, consumers=natural - 5).consumers) == natural


@pytest.mark.django_db
def test_history_is_the_change_log_the_services_would_have_written():
    planned = cloud.operator_cloud(25)
    cloud.build(planned)
    nodes = [node for tree in planned.trees for node in cloud.walk(tree)]
    held = {(key, node.uuid) for node in nodes for key, _ in node.allocations}
    assert cloud.history(planned) == 2 * len(nodes) + len(planned.consumers) + len(held)
    root = ResourceProvider.objects.get(name=planned.compute_root)
    log = ChangeRecord.objects.filter(entity=root.uuid).order_by("created_at")
    assert [e.action for e in log][:2] == ["create", "inventories"]
    assert log[1].after["inventories"]["MEMORY_MB"] == {"total": 262144, "reserved": 4096}
    consumer = planned.consumer_uuids[planned.consumer_key]
    (entry,) = ChangeRecord.objects.filter(entity=consumer)
    assert entry.after["allocations"][root.uuid] == {"MEMORY_MB": 16384, "DISK_GB": 40}
