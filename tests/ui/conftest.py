"""Fixtures for the operator UI and admin tests: a logged-in staff client and sample trees."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.factories import allocate, allocate_across, make_consumer, make_provider

AGG = "5f2c7a34-3c0e-4d6e-8a43-000000000001"


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_superuser("operator", "op@example.invalid", "pw")


@pytest.fixture
def client(staff):
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def sample(db):
    return build_sample()


def build_sample():
    """cn1 (numa0, numa1 below it), cn2, a sharing disk provider, two consumers; also
    the browser tests' (tests/browser/test_round_five_rows.py)."""
    cn1 = make_provider("cn1", inventory={"MEMORY_MB": {"total": 4096, "reserved": 96}},
                        traits=["HW_CPU_X86_AVX2"], aggregates=[AGG])
    numa0 = make_provider("cn1-numa0", parent=cn1, inventory={"VCPU": 8},
                          traits=["HW_NUMA_ROOT"])
    numa1 = make_provider("cn1-numa1", parent=cn1, inventory={"VCPU": 8})
    cn2 = make_provider("cn2", inventory={"VCPU": 16, "MEMORY_MB": 8192})
    disk = make_provider("shared-disk", inventory={"DISK_GB": 1000},
                         traits=["MISC_SHARES_VIA_AGGREGATE"], aggregates=[AGG])
    vm1 = make_consumer(project="proj-a", user="alice", consumer_type="INSTANCE")
    vm2 = make_consumer(project="proj-b", user="bob")
    # one write, as nova claims an instance's resources
    allocate_across(vm1, {numa0: {"VCPU": 6}, cn1: {"MEMORY_MB": 2048}, disk: {"DISK_GB": 100}})
    allocate(vm2, cn2, VCPU=2, MEMORY_MB=512)
    return {"cn1": cn1, "numa0": numa0, "numa1": numa1, "cn2": cn2, "disk": disk,
            "vm1": vm1, "vm2": vm2}
