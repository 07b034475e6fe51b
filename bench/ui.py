"""Time the operator UI's pages on a synthetic cloud of N providers.

Usage::

    python -m bench ui [--providers 1000] [--consumers N] [--repeat 7]

Builds the operator cloud (bench/cloud.py, `operator_cloud`) in the configured database
(DATABASE_URL), inside a transaction that is rolled back at the end, so nothing is left
behind; the providers table must be empty, so the figures describe this cloud only.
The cloud has about 0.4 consumers per provider; ``--consumers`` adds small instances
up to that many (issue 35's target is 3,000 providers / 3,000 consumers).
Rows are bulk-created, not written through the services: this measures reads, and
1,000 providers through the services would take minutes; so is the change log those
writes would have left (`cloud.history`). A staff user is logged in
with Django's test client, each page is requested once (warm-up, must answer 200, or
the redirect a one-match search is),
then ``--repeat`` times, and a table of median wall ms, median CPU ms (this thread's
time, so waits for a core on a busy machine are not counted), SQL queries and response
size is printed, with the load average. The per-request log lines (placement.request,
INFO) are turned off while it runs, to keep the table readable. Before the first
request, the objects alive are moved out of the cyclic collector's reach, as a served
worker does once loaded (foundation.ops.collector.freeze_startup_objects). The run fails (non-zero
exit) if any page did not answer as expected.
"""
import gc
import logging
import os
import statistics
import time
import uuid as uuidlib
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from bench import BenchError, cloud
from foundation.ops import collector
from allocations.models import Consumer, Project, User
from providers.models import ChangeRecord, ResourceClass, ResourceProvider, Trait

HELP = "build a cloud of N providers in a rolled-back transaction and time every UI page"


def add_arguments(parser):
    parser.add_argument("--providers", type=int, default=1000,
                        help=f"providers to build (at least {cloud.OPERATOR_MIN_PROVIDERS}; "
                             "default 1000)")
    parser.add_argument("--consumers", type=int, default=0,
                        help="add small instances until there are this many consumers "
                             "(default: none added, about 0.4 per provider)")
    parser.add_argument("--repeat", type=int, default=7,
                        help="timed requests per page after one warm-up (default 7)")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="time only the pages whose label contains TEXT (any case; "
                             "repeat for several); the cloud is built whole all the same")


def run(options, out):
    providers, repeat = options.providers, options.repeat
    if providers < cloud.OPERATOR_MIN_PROVIDERS:
        raise BenchError(f"--providers must be at least {cloud.OPERATOR_MIN_PROVIDERS}, "
                         f"not {providers}")
    if repeat < 1:
        raise BenchError(f"--repeat must be at least 1, not {repeat}")
    try:
        built_before = ResourceProvider.objects.exists()
    except DatabaseError as exc:
        raise BenchError(f"cannot read the providers table ({exc.__class__.__name__}); "
                         "migrate the database first: python manage.py migrate") from None
    if built_before:
        raise BenchError("providers exist: the ui benchmark builds its own cloud, "
                         "point DATABASE_URL at an empty migrated database")
    request_log = logging.getLogger("placement.request")
    level = request_log.level
    request_log.setLevel(logging.WARNING)
    try:
        failed = _timed_pages(providers, options.consumers, repeat, out, options.only)
    finally:
        request_log.setLevel(level)
        gc.unfreeze()
    if failed:
        raise BenchError(f"not answered as expected: {', '.join(failed)}")


def _timed_pages(providers, consumers, repeat, out, only=()):
    """Build, time and print; returns the labels of pages that did not answer as expected."""
    failed = []
    with transaction.atomic():
        started = time.perf_counter()
        planned = cloud.operator_cloud(providers, consumers)
        built = cloud.build(planned)
        entries = cloud.history(planned)
        cloud.analyze()
        out.write(f"built {built} providers, {len(planned.consumers)} consumers, "
                  f"{entries} change log entries in "
                  f"{time.perf_counter() - started:.1f}s ({connection.vendor}); "
                  "rolled back at the end\n")
        client = Client()
        client.force_login(get_user_model().objects.create_superuser(
            f"benchmark-ui-{uuidlib.uuid4().hex[:8]}", "benchmark@example.invalid", None))
        # as a gunicorn worker does once loaded (post_worker_init); the built cloud's
        # own objects, which a server would not hold, go out of the collector's reach too
        collector.freeze_startup_objects()
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        out.write(f"{'page':40} {'status':>6} {'median ms':>10} {'CPU ms':>8} "
                  f"{'queries':>8} {'KiB':>6}  (median of {repeat}; load {load})\n")
        wanted = [text.lower() for text in only]
        for label, method, url, data, *answer in pages(planned):
            if wanted and not any(text in label.lower() for text in wanted):
                continue
            expected = answer[0] if answer else 200
            status, wall, cpu, counts, size = measure(client, method, url, data, repeat,
                                                      expected)
            queries = "-".join(str(c) for c in sorted({min(counts), max(counts)})) \
                if counts else "-"
            if status != expected:
                failed.append(label)
                out.write(f"{label:40} {status:>6} {'-':>10} {'-':>8} {queries:>8} {'-':>6}\n")
            else:
                out.write(f"{label:40} {status:>6} {wall:10.1f} {cpu:8.1f} "
                          f"{queries:>8} {size:6.0f}\n")
        transaction.set_rollback(True)
    return failed


def pages(planned):
    """(label, method, url, data[, status]) of every page timed on the built operator
    cloud; the status expected is 200 unless given (a search with one match redirects
    to it: what is timed is the search)."""
    named = {name: (pk, uuid) for name, pk, uuid in ResourceProvider.objects.filter(
        name__in=[planned.big_root, planned.compute_root, planned.sharing_root, "big-0-s0-d0"])
        .values_list("name", "id", "uuid")}
    by_name = {name: uuid for name, (_, uuid) in named.items()}
    consumer = Consumer.objects.get(uuid=planned.consumer_uuids[planned.consumer_key])
    numas = list(ResourceProvider.objects.filter(name__in=planned.numa_names)
                 .order_by("name").values_list("uuid", flat=True))
    providers, csv = reverse("ui:providers"), reverse("ui:providers-csv")
    candidates, why_not = reverse("ui:candidates"), reverse("ui:why-not")
    # the consumer's VCPU on its first NUMA node, to any other provider of VCPU
    picker = reverse("ui:consumer-move-target",
                     args=[planned.consumer_uuids[planned.consumer_key]])
    root = ResourceProvider.objects.filter(allocations__consumer=consumer).values_list(
        "root__uuid", flat=True).first()
    return [
        ("dashboard", "get", reverse("ui:dashboard"), None),
        ("search, part of a name", "get", reverse("ui:search"), {"q": "cn0"}),
        ("search, a provider's uuid", "get", reverse("ui:search"),
         {"q": by_name[planned.compute_root]}, 302),
        ("search, a consumer uuid's first 8", "get", reverse("ui:search"),
         {"q": str(consumer.uuid)[:8]}, 302),
        ("search, part of a trait", "get", reverse("ui:search"), {"q": "AVX"}),
        ("providers, page 1 by name", "get", providers, None),
        ("providers, page 3 by name", "get", providers, {"page": 3}),
        ("providers, sorted by usage", "get", providers, {"sort": "-usage"}),
        ("providers, usage of VCPU", "get", providers, {"sort": "-usage", "usage_of": "VCPU"}),
        ("providers, resources + required", "get", providers,
         {"resources": "VCPU:4", "required": "HW_NUMA_ROOT"}),
        ("providers, member_of + !trait", "get", providers,
         {"member_of": cloud.OPERATOR_AGGREGATES[1], "required": "!HW_CPU_X86_AVX2"}),
        ("providers, over capacity", "get", providers, {"over_capacity": "on"}),
        ("providers, name contains", "get", providers, {"q": "pf1"}),
        ("providers CSV, all", "get", csv, None),
        ("providers CSV, by usage", "get", csv, {"sort": "-usage"}),
        ("subtree fragment of big-0", "get",
         reverse("ui:provider-subtree", args=[by_name[planned.big_root]]),
         {"start": 1, "fragment": "1"}),
        ("subtree page of big-0", "get",
         reverse("ui:provider-subtree", args=[by_name[planned.big_root]]), None),
        ("provider page (cn0000)", "get",
         reverse("ui:provider", args=[by_name[planned.compute_root]]), None),
        ("provider page (big-0)", "get",
         reverse("ui:provider", args=[by_name[planned.big_root]]), None),
        (f"provider page ({planned.sharing_root})", "get",
         reverse("ui:provider", args=[by_name[planned.sharing_root]]), None),
        ("capacity", "get", reverse("ui:capacity"), None),
        *history_pages(planned, by_name),
        ("capacity ?rc=VCPU", "get", reverse("ui:capacity"), {"rc": "VCPU"}),
        ("status", "get", reverse("ui:status"), None),
        ("resource classes", "get", reverse("ui:resource-classes"), None),
        ("traits", "get", reverse("ui:traits"), None),
        ("bulk list VCPU, page 1", "get", reverse("ui:bulk"), {"resource_class": "VCPU"}),
        ("bulk list VCPU, a tree", "get", reverse("ui:bulk"),
         {"resource_class": "VCPU", "tree": planned.big_root}),
        # hosts chosen by aggregate or trait, their NUMA nodes' VCPU (issue 52 row 1)
        ("bulk list VCPU, an aggregate", "get", reverse("ui:bulk"),
         {"resource_class": "VCPU", "aggregate": cloud.OPERATOR_AGGREGATES[1]}),
        ("bulk list VCPU, a trait", "get", reverse("ui:bulk"),
         {"resource_class": "VCPU", "trait": "HW_CPU_X86_AVX2"}),
        ("POST bulk preview VCPU, a trait, all", "post", reverse("ui:bulk-preview"),
         {"resource_class": "VCPU", "trait": "HW_CPU_X86_AVX2", "scope": "all",
          "allocation_ratio": "2.0"}),
        (f"POST bulk preview ({len(numas)})", "post", reverse("ui:bulk-preview"),
         {"resource_class": "VCPU", "provider": numas, "allocation_ratio": "1.0"}),
        ("bulk traits and aggregates, page 1", "get", reverse("ui:bulk-membership"), None),
        ("bulk traits and aggregates, an aggregate", "get", reverse("ui:bulk-membership"),
         {"aggregate": cloud.OPERATOR_AGGREGATES[1]}),
        ("POST bulk traits preview, every provider", "post",
         reverse("ui:bulk-membership-preview"),
         {"scope": "all", "add_traits": "HW_CPU_X86_AVX2"}),
        ("usages", "get", reverse("ui:usages"), None),
        ("usages by project, by VCPU", "get", reverse("ui:usages"),
         {"group_by": "project", "sort": "VCPU"}),
        ("usages, last page", "get", reverse("ui:usages"), {"page": 9999}),
        ("usages CSV", "get", reverse("ui:usages-csv"), None),
        ("consumers, page 1", "get", reverse("ui:consumers"), None),
        ("consumers, last page", "get", reverse("ui:consumers"), {"page": 9999}),
        ("consumers of a project", "get", reverse("ui:consumers"), {"project": "project-1"}),
        ("consumer page", "get", reverse("ui:consumer", args=[consumer.uuid]), None),
        ("consumers on a host", "get", reverse("ui:consumers"),
         {"host": planned.compute_root}),
        ("whole-host move picker", "get",
         reverse("ui:consumer-move-tree-target", args=[consumer.uuid]), {"root": root}),
        ("whole-host move picker, has everything", "get",
         reverse("ui:consumer-move-tree-target", args=[consumer.uuid]),
         {"root": root, "same": "on"}),
        ("provider page (big-0), consumers by VCPU", "get",
         reverse("ui:provider", args=[by_name[planned.big_root]]), {"consumers-sort": "-VCPU"}),
        ("move picker, VCPU", "get", picker, {"provider": numas[0], "resource_class": "VCPU"}),
        ("move picker, VCPU, has everything", "get", picker,
         {"provider": numas[0], "resource_class": "VCPU", "same": "on"}),
        ("move picker, VCPU, page 9", "get", picker,
         {"provider": numas[0], "resource_class": "VCPU", "page": 9}),
        ("move picker, VCPU, name contains", "get", picker,
         {"provider": numas[0], "resource_class": "VCPU", "q": "numa1"}),
        ("move picker, CUSTOM_DEV", "get",
         reverse("ui:consumer-move-target", args=[planned.consumer_uuids["dev-0-0-0"]]),
         {"provider": by_name["big-0-s0-d0"], "resource_class": "CUSTOM_DEV"}),
        ("candidates, page 1", "get", candidates,
         {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39"}),
        ("candidates, page 5", "get", candidates,
         {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39", "page": "5"}),
        ("candidates, by host name", "get", candidates,
         {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39", "order": "name"}),
        ("candidates, most room left, page 2", "get", candidates,
         {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39", "order": "most_room",
          "page": "2"}),
        ("candidates, host name contains", "get", candidates,
         {"q": "resources=VCPU:1,MEMORY_MB:512", "version": "1.39", "host": "cn00"}),
        ("candidates, granular + sharing", "get", candidates,
         {"q": "resources=MEMORY_MB:512,DISK_GB:50&resources_NET=SRIOV_NET_VF:1"
               "&required_NET=CUSTOM_PHYSNET1&resources_CPU=VCPU:2&group_policy=isolate",
          "version": "1.39"}),
        ("why-not, empty answer", "get", why_not,
         {"q": "resources=VCPU:200,MEMORY_MB:512", "version": "1.39"}),
        ("why-not, traits + aggregate", "get", why_not,
         {"q": "resources=VCPU:1,MEMORY_MB:512,DISK_GB:100&required=HW_CPU_X86_AVX2"
               f"&member_of={cloud.OPERATOR_SHARED_AGGREGATE}", "version": "1.39"}),
        ("why-not, isolate + same_subtree", "get", why_not,
         {"q": "resources_A=SRIOV_NET_VF:4&resources_B=SRIOV_NET_VF:4&required_N=HW_NUMA_ROOT"
               "&group_policy=isolate&same_subtree=_A,_B,_N", "version": "1.39", "page": "3"}),
        ("why-not.json, empty answer", "get", reverse("ui:why-not-json"),
         {"q": "resources=VCPU:200,MEMORY_MB:512", "version": "1.39"}),
        *admin_pages(named[planned.compute_root][0], named[planned.big_root][0],
                     named[planned.sharing_root][0], consumer.pk),
    ]


def history_pages(planned, by_name):
    """The history pages on the 30 days of change log cloud.history() left."""
    history, month = reverse("ui:history"), {"window": "30d"}
    return [
        (f"history, a host ({planned.compute_root}), 30d", "get", history,
         {"provider": by_name[planned.compute_root], **month}),
        (f"history, a device tree ({planned.big_root}), 30d", "get", history,
         {"tree": by_name[planned.big_root], **month}),
        ("history, the shared aggregate, 30d", "get", history,
         {"aggregate": cloud.OPERATOR_SHARED_AGGREGATE, **month}),
        ("history, VCPU cloud-wide, 30d", "get", history, {"resource_class": "VCPU", **month}),
        ("history, the whole cloud, 7d", "get", history, {"window": "7d"}),
        ("history, the whole cloud, 30d, page 50", "get", history, {"page": 50, **month}),
        ("history CSV, VCPU cloud-wide, 30d", "get", reverse("ui:history-csv"),
         {"resource_class": "VCPU", **month}),
    ]


def admin_pages(compute_root, big_root, sharing_root, consumer):
    """The Django admin pages operators use (ids of the pages' objects)."""
    def changelist(model):
        return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")

    def change(model, pk):
        return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change",
                       args=[pk])

    providers, consumers = changelist(ResourceProvider), changelist(Consumer)
    return [
        ("admin index", "get", reverse("admin:index"), None),
        ("admin providers", "get", providers, None),
        ("admin providers, page 20", "get", providers, {"p": 20}),
        ("admin providers, search", "get", providers, {"q": "cn01"}),
        ("admin provider change (cn0000)", "get", change(ResourceProvider, compute_root), None),
        ("admin provider change (big-0)", "get", change(ResourceProvider, big_root), None),
        ("admin provider change (shared-disk)", "get", change(ResourceProvider, sharing_root),
         None),
        ("admin provider add", "get",
         reverse("admin:providers_resourceprovider_add"), None),
        ("admin parent autocomplete", "get", reverse("admin:autocomplete"),
         {"term": "cn", "app_label": "providers", "model_name": "resourceprovider",
          "field_name": "parent"}),
        ("admin consumers", "get", consumers, None),
        ("admin consumers, search", "get", consumers, {"q": "project-1"}),
        ("admin consumer change", "get", change(Consumer, consumer), None),
        ("admin projects", "get", changelist(Project), None),
        ("admin users", "get", changelist(User), None),
        ("admin resource classes", "get", changelist(ResourceClass), None),
        ("admin traits", "get", changelist(Trait), None),
        ("admin change log", "get", changelist(ChangeRecord), None),
        ("admin change log, consumers", "get", changelist(ChangeRecord), {"kind": "consumer"}),
        ("admin change log, search", "get", changelist(ChangeRecord), {"q": "cn01"}),
    ]


def measure(client, method, url, data, repeat, expected=200):
    """Warm-up, then `repeat` requests: (status, median wall ms, median CPU ms,
    query counts seen, KiB), timed if each answered `expected`. A form is posted
    url-encoded, as a browser does."""
    if method == "post":
        def send():
            return client.post(url, urlencode(data, doseq=True),
                               content_type="application/x-www-form-urlencoded")
    else:
        def send():
            return client.get(url, data or {})
    response = send()
    if response.status_code != expected:
        return response.status_code, None, None, set(), 0
    walls, cpus, counts = [], [], set()
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            wall, cpu = time.perf_counter(), time.thread_time()
            response = send()
            cpus.append((time.thread_time() - cpu) * 1000)
            walls.append((time.perf_counter() - wall) * 1000)
        counts.add(len(queries))
        if response.status_code != expected:
            return response.status_code, None, None, counts, 0
    return (expected, statistics.median(walls), statistics.median(cpus), counts,
            len(response.content) / 1024)
