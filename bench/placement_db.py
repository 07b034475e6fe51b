"""A large synthetic Placement 16.0.0 database, for the import benchmark.

Usage::

    python -m bench placement_db URL [--providers N] [--consumers N] [--seed N]

Creates Placement's schema in the empty database at URL (sqlite:///path,
mysql+pymysql://user:pw@host/db or postgresql://...) and fills it.

Trees of 1 + 4 providers: a compute node (DISK_GB) with two NUMA children
(VCPU, MEMORY_MB) and two SR-IOV PF children (SRIOV_NET_VF, a custom class on
one of them). Each consumer holds VCPU and MEMORY_MB on one NUMA node and
DISK_GB on its root: three allocations. Deterministic for a given seed.
"""
import random
import uuid as uuidlib
from datetime import datetime, timedelta

import os_resource_classes
import os_traits

from allocations.upstream import UpstreamError, schema
from allocations.upstream.dbapi import Database
from allocations.upstream.exporter import create_schema

from bench import BenchError

HELP = "create a large synthetic Placement database (the import benchmark's source)"
CUSTOM_CLASS = "CUSTOM_BENCH_ACCEL"
CUSTOM_TRAIT = "CUSTOM_BENCH_RACK"
CONSUMER_TYPES = ["INSTANCE", "MIGRATION"]


def generate(url, *, providers=10000, consumers=100000, seed=1, batch_size=5000,
             progress=None):
    """Create the schema in the empty database at `url` and fill it.

    providers: total count, rounded down to whole trees of 5.
    Returns {table: rows}.
    """
    rng = random.Random(seed)
    trees = max(providers // 5, 1)
    start = datetime(2024, 1, 1)

    def new_uuid():
        return str(uuidlib.UUID(int=rng.getrandbits(128), version=4))

    def stamp(i):
        value = start + timedelta(seconds=i)
        return value.strftime("%Y-%m-%d %H:%M:%S") if db.dialect == "sqlite" else value

    db = Database(url, must_exist=False)
    counts = {}

    def insert(table, columns, rows):
        marks = ", ".join(["%s"] * len(columns))
        db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
        counts[table] = counts.get(table, 0) + len(rows)
        if progress:
            progress(table, counts[table])

    try:
        db.begin_write()
        create_schema(db)
        class_id = {name: i for i, name in enumerate(os_resource_classes.STANDARDS)}
        class_id[CUSTOM_CLASS] = schema.FIRST_CUSTOM_CLASS_ID
        insert("resource_classes", ["id", "name", "created_at"],
               [(pk, name, stamp(0)) for name, pk in class_id.items()])
        trait_names = sorted(os_traits.get_traits()) + [CUSTOM_TRAIT]
        insert("traits", ["id", "name", "created_at"],
               [(i, name, stamp(0)) for i, name in enumerate(trait_names, start=1)])
        trait_id = {name: i for i, name in enumerate(trait_names, start=1)}
        aggregates = max(trees // 100, 1)
        insert("placement_aggregates", ["id", "uuid", "created_at"],
               [(i, new_uuid(), stamp(1)) for i in range(1, aggregates + 1)])
        insert("projects", ["id", "external_id"], [(i, new_uuid()) for i in range(1, 51)])
        insert("users", ["id", "external_id"], [(i, new_uuid()) for i in range(1, 201)])
        insert("consumer_types", ["id", "name", "created_at"],
               [(i, name, stamp(1)) for i, name in enumerate(CONSUMER_TYPES, start=1)])

        numa = []  # (provider id, root id) of every NUMA node, for the allocations
        rp_rows, inv_rows, trait_rows, agg_rows = [], [], [], []

        def flush():  # all tables at once: MariaDB checks the trait rows' foreign keys
            for table, columns, rows in (
                    ("resource_providers", ["id", "uuid", "name", "generation",
                                            "root_provider_id", "parent_provider_id",
                                            "created_at", "updated_at"], rp_rows),
                    ("inventories", ["resource_provider_id", "resource_class_id", "total",
                                     "reserved", "min_unit", "max_unit", "step_size",
                                     "allocation_ratio", "created_at"], inv_rows),
                    ("resource_provider_traits", ["resource_provider_id", "trait_id",
                                                  "created_at"], trait_rows),
                    ("resource_provider_aggregates", ["resource_provider_id",
                                                      "aggregate_id", "created_at"], agg_rows)):
                if rows:
                    insert(table, columns, rows)
                    rows.clear()

        pk = 0
        for tree in range(trees):
            pk += 1
            root = pk
            rp_rows.append((root, new_uuid(), f"cn{tree}", rng.randint(1, 40), root, None,
                            stamp(2 + tree), stamp(3 + tree)))
            inv_rows.append((root, class_id["DISK_GB"], 2000, 0, 1, 2000, 1, 1.0, stamp(2)))
            trait_rows.append((root, trait_id["HW_CPU_X86_AVX2"], stamp(2)))
            agg_rows.append((root, 1 + tree % aggregates, stamp(2)))
            for child in range(4):
                pk += 1
                rp_rows.append((pk, new_uuid(), f"cn{tree}_{child}", rng.randint(1, 10),
                                root, root, stamp(2 + tree), None))
                if child < 2:
                    numa.append((pk, root))
                    inv_rows.append((pk, class_id["VCPU"], 64, 0, 1, 64, 1, 4.0, stamp(2)))
                    inv_rows.append((pk, class_id["MEMORY_MB"], 262144, 4096, 1, 262144, 1,
                                     1.5, stamp(2)))
                    trait_rows.append((pk, trait_id["HW_NUMA_ROOT"], stamp(2)))
                else:
                    inv_rows.append((pk, class_id["SRIOV_NET_VF"], 16, 0, 1, 16, 1, 1.0,
                                     stamp(2)))
                    if child == 3:
                        inv_rows.append((pk, class_id[CUSTOM_CLASS], 4, 0, 1, 4, 1, 1.0,
                                         stamp(2)))
                        trait_rows.append((pk, trait_id[CUSTOM_TRAIT], stamp(2)))
            if len(rp_rows) >= batch_size:
                flush()
        flush()

        consumer_rows, alloc_rows = [], []
        for i in range(1, consumers + 1):
            node, root = numa[i % len(numa)]
            consumer_uuid = new_uuid()
            ctype = (None, 1, 2)[i % 3]
            consumer_rows.append((i, consumer_uuid, 1 + i % 50, 1 + i % 200, rng.randint(1, 5),
                                  ctype, stamp(100 + i), stamp(200 + i)))
            alloc_rows += [(node, consumer_uuid, class_id["VCPU"], 2, stamp(100 + i)),
                           (node, consumer_uuid, class_id["MEMORY_MB"], 2048, stamp(100 + i)),
                           (root, consumer_uuid, class_id["DISK_GB"], 20, stamp(100 + i))]
            if len(consumer_rows) >= batch_size:
                _flush_consumers(insert, consumer_rows, alloc_rows)
        _flush_consumers(insert, consumer_rows, alloc_rows)
        db.commit()
    except BaseException:
        db.end()
        raise
    finally:
        db.close()
    return counts


def _flush_consumers(insert, consumer_rows, alloc_rows):
    if consumer_rows:
        insert("consumers", ["id", "uuid", "project_id", "user_id", "generation",
                             "consumer_type_id", "created_at", "updated_at"], consumer_rows)
        insert("allocations", ["resource_provider_id", "consumer_id", "resource_class_id",
                               "used", "created_at"], alloc_rows)
        consumer_rows.clear()
        alloc_rows.clear()


def add_arguments(parser):
    parser.add_argument("url", metavar="URL")
    parser.add_argument("--providers", type=int, default=10000,
                        help="providers, in trees of 1 + 4 (default: %(default)s)")
    parser.add_argument("--consumers", type=int, default=100000,
                        help="consumers, three allocations each (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)


def run(options, out):
    if options.providers < 5 or options.consumers < 1:
        raise BenchError("--providers must be at least 5 and --consumers at least 1")
    try:
        counts = generate(options.url, providers=options.providers,
                          consumers=options.consumers, seed=options.seed)
    except UpstreamError as exc:
        raise BenchError(str(exc))
    for table, rows in counts.items():
        out.write(f"{table:30} {rows:>10}\n")
    out.write(f"Generated {sum(counts.values())} rows.\n")
