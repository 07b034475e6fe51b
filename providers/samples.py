"""Example provider topologies, as tree documents (see `manage.py import_tree`).

`manage.py load_sample NAME|all` loads them through the services the API writes with, so
they are validated like any client's data. Every uuid is derived from the
sample and object names (uuid5), so loading a sample twice changes nothing.
Names are prefixed with the sample name so all samples can coexist.
"""
import uuid as uuidlib

FORMAT = "placement-tree/1"
PROJECT = "5a3e7a36-6c43-4f5c-9a54-0d1fa8e0c0de"
USER = "0b7c1f8e-2d4a-4e0b-8f7e-6a3c2b1d9e5f"


def sample_uuid(*parts):
    """A stable uuid for sample data (same parts, same uuid)."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, "placement-sample:" + "/".join(parts)))


def _provider(sample, name, parent=None, inventories=None, traits=(), aggregates=()):
    return {
        "uuid": sample_uuid(sample, name),
        "name": f"{sample}-{name}",
        "parent_provider_uuid": sample_uuid(sample, parent) if parent else None,
        "inventories": inventories or {},
        "traits": sorted(traits),
        "aggregates": sorted(aggregates),
    }


def _consumer(sample, name, allocations, consumer_type="INSTANCE"):
    """allocations: {provider name: {class: amount}}."""
    return sample_uuid(sample, "consumer", name), {
        "allocations": {sample_uuid(sample, rp): {"resources": resources}
                        for rp, resources in allocations.items()},
        "project_id": PROJECT,
        "user_id": USER,
        "consumer_type": consumer_type,
    }


def _compute_inventory(vcpus=32, memory_mb=131072, disk_gb=None):
    inventory = {
        "VCPU": {"total": vcpus, "allocation_ratio": 4.0, "max_unit": vcpus},
        "MEMORY_MB": {"total": memory_mb, "reserved": 2048, "max_unit": memory_mb},
    }
    if disk_gb:
        inventory["DISK_GB"] = {"total": disk_gb, "reserved": 20}
    return inventory


def shared_storage():
    """Two compute nodes without local disk and a DISK_GB provider they share."""
    s = "shared-storage"
    aggregate = sample_uuid(s, "aggregate")
    providers = [
        _provider(s, "cn1", inventories=_compute_inventory(), aggregates=[aggregate],
                  traits=["HW_CPU_X86_AVX2", "COMPUTE_VOLUME_MULTI_ATTACH"]),
        _provider(s, "cn2", inventories=_compute_inventory(), aggregates=[aggregate],
                  traits=["HW_CPU_X86_AVX2"]),
        _provider(s, "storage", aggregates=[aggregate],
                  traits=["MISC_SHARES_VIA_AGGREGATE", "STORAGE_DISK_SSD"],
                  inventories={"DISK_GB": {"total": 10240, "reserved": 100, "min_unit": 1,
                                           "max_unit": 2048, "step_size": 1}}),
    ]
    consumers = dict([
        _consumer(s, "vm1", {"cn1": {"VCPU": 2, "MEMORY_MB": 4096}, "storage": {"DISK_GB": 40}}),
        _consumer(s, "vm2", {"cn2": {"VCPU": 4, "MEMORY_MB": 8192},
                             "storage": {"DISK_GB": 100}}),
    ])
    return {"format": FORMAT, "providers": providers, "allocations": consumers}


def numa_fpga():
    """A compute node with two NUMA nodes, each with an FPGA card below it."""
    s = "numa-fpga"
    providers = [_provider(s, "cn1", inventories={"DISK_GB": {"total": 2000, "reserved": 50}},
                           traits=["HW_CPU_X86_AVX512F"])]
    for numa in (0, 1):
        providers.append(_provider(
            s, f"numa{numa}", parent="cn1", traits=["HW_NUMA_ROOT"],
            inventories={"VCPU": {"total": 16, "max_unit": 16},
                         "PCPU": {"total": 8, "max_unit": 8},
                         "MEMORY_MB": {"total": 65536, "reserved": 1024, "max_unit": 65536}}))
        providers.append(_provider(
            s, f"numa{numa}-fpga0", parent=f"numa{numa}",
            traits=["CUSTOM_FPGA_INTEL_ARRIA10"],
            inventories={"FPGA": {"total": 2, "max_unit": 1}}))
    consumers = dict([
        _consumer(s, "accelerated-vm", {"numa0": {"VCPU": 4, "MEMORY_MB": 8192},
                                        "numa0-fpga0": {"FPGA": 1}, "cn1": {"DISK_GB": 20}}),
        _consumer(s, "pinned-vm", {"numa1": {"PCPU": 4, "MEMORY_MB": 16384},
                                   "cn1": {"DISK_GB": 40}}),
    ])
    return {"format": FORMAT, "traits": ["CUSTOM_FPGA_INTEL_ARRIA10"],
            "providers": providers, "allocations": consumers}


def sriov_physnets():
    """A compute node with two NICs, each with SR-IOV physical functions on two physnets."""
    s = "sriov"
    providers = [_provider(s, "cn1", inventories=_compute_inventory(disk_gb=1000),
                           traits=["COMPUTE_NET_VIF_MODEL_SRIOV"])]
    for nic in (1, 2):
        providers.append(_provider(s, f"nic{nic}", parent="cn1",
                                   traits=["HW_NIC_SRIOV", "HW_NIC_OFFLOAD_TSO"]))
        for pf, physnet in ((0, "PUBLIC"), (1, "PRIVATE")):
            providers.append(_provider(
                s, f"nic{nic}-pf{pf}", parent=f"nic{nic}",
                traits=[f"CUSTOM_PHYSNET_{physnet}", "HW_NIC_SRIOV"],
                inventories={
                    "SRIOV_NET_VF": {"total": 8, "max_unit": 8},
                    "NET_BW_EGR_KILOBIT_PER_SEC": {"total": 10000000},
                    "NET_BW_IGR_KILOBIT_PER_SEC": {"total": 10000000},
                }))
    consumers = dict([
        _consumer(s, "router-vm", {"cn1": {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20},
                                   "nic1-pf0": {"SRIOV_NET_VF": 1,
                                                "NET_BW_EGR_KILOBIT_PER_SEC": 1000000},
                                   "nic2-pf1": {"SRIOV_NET_VF": 1}}),
        _consumer(s, "db-vm", {"cn1": {"VCPU": 8, "MEMORY_MB": 32768, "DISK_GB": 200},
                               "nic2-pf0": {"SRIOV_NET_VF": 2}}),
    ])
    return {"format": FORMAT, "traits": ["CUSTOM_PHYSNET_PRIVATE", "CUSTOM_PHYSNET_PUBLIC"],
            "providers": providers, "allocations": consumers}


# name -> (builder, one-line description)
SAMPLES = {
    "shared_storage": (shared_storage,
                       "2 compute nodes sharing a DISK_GB provider through an aggregate"),
    "numa_fpga": (numa_fpga, "compute node -> 2 NUMA nodes -> an FPGA below each"),
    "sriov_physnets": (sriov_physnets,
                       "compute node -> 2 NICs -> PFs with SRIOV_NET_VF on 2 physnets"),
}


def sample_document(name):
    """The tree document of sample `name` (KeyError if unknown)."""
    return SAMPLES[name][0]()
