"""Provider tree documents: export from the database, import through the API.

A tree document (JSON) describes providers with their inventories, traits and
aggregates, and optionally consumers with their allocations:

    {
      "format": "placement-tree/1",
      "resource_classes": ["CUSTOM_..."],      # custom classes to ensure (optional)
      "traits": ["CUSTOM_..."],                # custom traits to ensure (optional)
      "providers": [                           # parents before children
        {"uuid": "...", "name": "cn1", "parent_provider_uuid": null,
         "inventories": {"VCPU": {"total": 8, "allocation_ratio": 16.0, ...}},
         "traits": ["HW_CPU_X86_AVX2"], "aggregates": ["<agg uuid>"]}
      ],
      "allocations": {                         # optional
        "<consumer uuid>": {"allocations": {"<rp uuid>": {"resources": {"VCPU": 2}}},
                            "project_id": "...", "user_id": "...",
                            "consumer_type": "INSTANCE"}    # consumer_type optional
      }
    }

Export reads the models directly. Import is planned against the database
first (conflicts are refused before anything is written), then applied with
the services the API calls, inside one transaction, so it gets exactly the
API's validation and is all-or-nothing. Import is
idempotent: what already matches is left alone (no generation churn), what
differs in inventories, traits or aggregates of a provider is updated.
Refused as conflicts: a uuid that exists with another name or another
parent, a name taken by another uuid, a consumer that already holds
different allocations.
"""
from dataclasses import dataclass, field

from django.db import transaction

from allocations import services as allocation_services
from allocations.models import Allocation
from foundation import jsonschemas, uuids
from foundation.domain_errors import DomainError
from foundation.jsonfile import read_json_file
from providers import rules
from providers.services.aggregates import aggregates_replace
from providers.services.inventories import inventories_replace
from providers.services.provider_traits import provider_traits_replace
from providers.services.providers import provider_create
from providers.services.resource_classes import resource_class_ensure
from providers.services.traits import trait_ensure
from providers.models import (
    Inventory,
    ProviderAggregate,
    ProviderTrait,
    ResourceProvider,
)

FORMAT = "placement-tree/1"
INVENTORY_FIELDS = rules.INVENTORY_FIELDS
INVENTORY_DEFAULTS = rules.INVENTORY_DEFAULTS

_NAME = {"type": "string", "pattern": rules.NAME_REGEX}
_CUSTOM = {"type": "string", "pattern": rules.CUSTOM_NAME_REGEX}
_UUID = {"type": "string", "pattern": uuids.CANONICAL_UUID_REGEX}
DOCUMENT_SCHEMA = {
    "type": "object",
    "properties": {
        "format": {"const": FORMAT},
        "resource_classes": {"type": "array", "items": _CUSTOM},
        "traits": {"type": "array", "items": _CUSTOM},
        "providers": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "uuid": _UUID,
                    "name": {"type": "string", "minLength": 1, "maxLength": 200},
                    "parent_provider_uuid": {"anyOf": [_UUID, {"type": "null"}]},
                    "inventories": {"type": "object", "additionalProperties": {
                        "type": "object",
                        "properties": {f: {"type": "number"} for f in INVENTORY_FIELDS},
                        "required": ["total"], "additionalProperties": False}},
                    "traits": {"type": "array", "items": _NAME},
                    "aggregates": {"type": "array", "items": _UUID},
                },
                "required": ["uuid", "name"],
                "additionalProperties": False,
            },
        },
        "allocations": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "allocations": {"type": "object", "additionalProperties": {
                        "type": "object",
                        "properties": {"resources": {
                            "type": "object",
                            "additionalProperties": {"type": "integer", "minimum": 1}}},
                        "required": ["resources"], "additionalProperties": False}},
                    "project_id": {"type": "string", "minLength": 1},
                    "user_id": {"type": "string", "minLength": 1},
                    "consumer_type": _NAME,
                },
                "required": ["allocations", "project_id", "user_id"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["providers"],
    "additionalProperties": False,
}


class TreeError(Exception):
    """Bad document, conflict with the database, or a write a service refused."""


# --- export -----------------------------------------------------------------------------

def export_trees(uuids=(), everything=False, allocations=False):
    """Build a tree document.

    uuids: providers whose whole trees (from their roots) are exported;
    everything: export every provider instead.
    Returns (document, warnings). Raises TreeError for unknown uuids.
    """
    providers = ResourceProvider.objects.all()
    if not everything:
        found = dict(ResourceProvider.objects.filter(uuid__in=list(uuids))
                     .values_list("uuid", "root_id"))
        missing = [u for u in uuids if u not in found]
        if missing:
            raise TreeError(f"No resource provider with uuid {', '.join(missing)}.")
        providers = providers.filter(root_id__in=set(found.values()))
    rows = list(providers.values("id", "uuid", "name", "parent_id", "parent__uuid"))
    ids = [row["id"] for row in rows]
    inventories, traits, aggregates = {}, {}, {}
    for inv in (Inventory.objects.filter(provider_id__in=ids)
                .values("provider_id", "resource_class__name", *INVENTORY_FIELDS)
                .order_by("resource_class__name")):
        record = {f: inv[f] for f in INVENTORY_FIELDS}
        inventories.setdefault(inv["provider_id"], {})[inv["resource_class__name"]] = record
    for pk, name in (ProviderTrait.objects.filter(provider_id__in=ids)
                     .values_list("provider_id", "trait__name").order_by("trait__name")):
        traits.setdefault(pk, []).append(name)
    for pk, agg in (ProviderAggregate.objects.filter(provider_id__in=ids)
                    .values_list("provider_id", "aggregate__uuid").order_by("aggregate__uuid")):
        aggregates.setdefault(pk, []).append(agg)

    document = {"format": FORMAT, "resource_classes": [], "traits": [], "providers": []}
    custom_classes, custom_traits = set(), set()
    for row in parents_first(rows, key="id", parent="parent_id"):
        pk = row["id"]
        document["providers"].append({
            "uuid": row["uuid"], "name": row["name"],
            "parent_provider_uuid": row["parent__uuid"],
            "inventories": inventories.get(pk, {}),
            "traits": traits.get(pk, []),
            "aggregates": aggregates.get(pk, []),
        })
        custom_classes.update(n for n in inventories.get(pk, {}) if rules.is_custom(n))
        custom_traits.update(n for n in traits.get(pk, []) if rules.is_custom(n))

    warnings = []
    if allocations:
        exported = {row["uuid"] for row in rows}
        consumers = Allocation.objects.filter(provider_id__in=ids).values("consumer_id")
        document["allocations"] = {}
        for alloc in (Allocation.objects.filter(consumer_id__in=consumers)
                      .values("consumer__uuid", "provider__uuid", "resource_class__name",
                              "used", "consumer__project__external_id",
                              "consumer__user__external_id", "consumer__consumer_type__name")
                      .order_by("consumer__uuid", "provider__uuid", "resource_class__name")):
            entry = document["allocations"].setdefault(alloc["consumer__uuid"], {
                "allocations": {},
                "project_id": alloc["consumer__project__external_id"],
                "user_id": alloc["consumer__user__external_id"],
            })
            if alloc["consumer__consumer_type__name"]:
                entry["consumer_type"] = alloc["consumer__consumer_type__name"]
            resources = entry["allocations"].setdefault(
                alloc["provider__uuid"], {"resources": {}})["resources"]
            resources[alloc["resource_class__name"]] = alloc["used"]
            if rules.is_custom(alloc["resource_class__name"]):
                custom_classes.add(alloc["resource_class__name"])
            if alloc["provider__uuid"] not in exported:
                warnings.append(
                    f"consumer {alloc['consumer__uuid']} also holds allocations on provider "
                    f"{alloc['provider__uuid']}, which is not exported; importing needs it "
                    "to exist")
    document["resource_classes"] = sorted(custom_classes)
    document["traits"] = sorted(custom_traits)
    return document, sorted(set(warnings))


def parents_first(items, key, parent):
    """Order `items` so every item comes after its parent (when the parent is present)."""
    by_key = {item[key]: item for item in items}
    ordered, placed = [], set()

    def place(item, trail=()):
        if item[key] in placed:
            return
        up = item.get(parent)
        if up in by_key and up not in placed:
            if up in trail:
                raise TreeError(f"Provider {item[key]}: parent links form a cycle.")
            place(by_key[up], trail + (item[key],))
        placed.add(item[key])
        ordered.append(item)

    for item in items:
        place(item)
    return ordered


# --- import ------------------------------------------------------------------------------

def load_document(path):
    """Read and validate a tree document file. Raises TreeError with a clear message."""
    document = read_json_file(path, error=TreeError)
    validate_document(document)
    return document


def validate_document(document):
    error = jsonschemas.first_error(document, DOCUMENT_SCHEMA)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(document)"
        raise TreeError(f"Invalid tree document at {where}: {error.message}")


@dataclass
class ImportReport:
    created: list = field(default_factory=list)
    updated: list = field(default_factory=list)
    unchanged: list = field(default_factory=list)
    consumers_created: list = field(default_factory=list)
    consumers_unchanged: list = field(default_factory=list)

    def lines(self):
        for name in self.created:
            yield f"Created provider {name}"
        for name, what in self.updated:
            yield f"Updated provider {name}: {', '.join(what)}"
        for consumer in self.consumers_created:
            yield f"Allocated consumer {consumer}"
        yield (f"{len(self.created)} provider(s) created, {len(self.updated)} updated, "
               f"{len(self.unchanged)} unchanged; {len(self.consumers_created)} consumer(s) "
               f"allocated, {len(self.consumers_unchanged)} unchanged.")


def import_document(document, progress=None):
    """Create/update what `document` describes, all or nothing. Returns an ImportReport.

    progress: optional callable() invoked once per provider and consumer written.
    Raises TreeError (conflict, or a write refused; nothing is written then).
    """
    validate_document(document)
    _check_unique(document["providers"])
    providers = parents_first(document["providers"], key="uuid",
                              parent="parent_provider_uuid")
    report = ImportReport()
    with transaction.atomic():
        existing = _check_providers(providers)
        wanted_consumers = _check_consumers(document.get("allocations", {}), providers)
        _ensure_names(document, providers)
        for spec in providers:
            _import_provider(spec, existing.get(spec["uuid"]), report)
            if progress:
                progress()
        _import_consumers(wanted_consumers, report, progress)
    return report


def _check_unique(providers):
    seen_uuids, seen_names = set(), set()
    for spec in providers:
        if spec["uuid"] in seen_uuids:
            raise TreeError(f"Provider uuid {spec['uuid']} appears twice in the document.")
        if spec["name"] in seen_names:
            raise TreeError(f"Provider name {spec['name']!r} appears twice in the document.")
        seen_uuids.add(spec["uuid"])
        seen_names.add(spec["name"])


def _check_providers(providers):
    """Refuse conflicts with the database; returns the state of existing providers."""
    seen_uuids = {spec["uuid"] for spec in providers}
    uuids = [spec["uuid"] for spec in providers]
    names = [spec["name"] for spec in providers]
    parents = [spec.get("parent_provider_uuid") for spec in providers]
    by_uuid = {row["uuid"]: row for row in ResourceProvider.objects.filter(
        uuid__in=uuids + [p for p in parents if p]).values("uuid", "name", "parent__uuid")}
    by_name = dict(ResourceProvider.objects.filter(name__in=names).values_list("name", "uuid"))
    for spec in providers:
        uuid, name, parent = spec["uuid"], spec["name"], spec.get("parent_provider_uuid")
        current = by_uuid.get(uuid)
        if current is not None:
            if current["name"] != name:
                raise TreeError(f"Conflict: provider {uuid} exists with name "
                                f"{current['name']!r}, the document says {name!r}.")
            if current["parent__uuid"] != parent:
                raise TreeError(f"Conflict: provider {uuid} ({name}) exists with parent "
                                f"{current['parent__uuid']}, the document says {parent}.")
        if name in by_name and by_name[name] != uuid:
            raise TreeError(f"Conflict: name {name!r} is taken by provider {by_name[name]}, "
                            f"the document gives it to {uuid}.")
        if parent and parent not in seen_uuids and parent not in by_uuid:
            raise TreeError(f"Provider {uuid} ({name}): parent {parent} is neither in the "
                            "document nor in the database.")
    return _current_state([u for u in by_uuid if u in seen_uuids])


def _current_state(uuids):
    """{uuid: {"generation", "inventories", "traits", "aggregates"}} of existing providers."""
    state = {uuid: {"generation": generation, "inventories": {}, "traits": set(),
                    "aggregates": set()}
             for uuid, generation in ResourceProvider.objects.filter(uuid__in=uuids)
             .values_list("uuid", "generation")}
    for inv in (Inventory.objects.filter(provider__uuid__in=uuids)
                .values("provider__uuid", "resource_class__name", *INVENTORY_FIELDS)):
        state[inv["provider__uuid"]]["inventories"][inv["resource_class__name"]] = {
            f: inv[f] for f in INVENTORY_FIELDS}
    for uuid, name in (ProviderTrait.objects.filter(provider__uuid__in=uuids)
                       .values_list("provider__uuid", "trait__name")):
        state[uuid]["traits"].add(name)
    for uuid, agg in (ProviderAggregate.objects.filter(provider__uuid__in=uuids)
                      .values_list("provider__uuid", "aggregate__uuid")):
        state[uuid]["aggregates"].add(agg)
    return state


def _check_consumers(allocations, providers):
    """Consumers to allocate; refuses those holding different allocations already."""
    if not allocations:
        return {}
    in_file = {spec["uuid"] for spec in providers}
    named = {rp for entry in allocations.values() for rp in entry["allocations"]}
    known = set(ResourceProvider.objects.filter(uuid__in=named).values_list("uuid", flat=True))
    missing = sorted(named - in_file - known)
    if missing:
        raise TreeError(f"Allocations name provider {missing[0]}, which is neither in the "
                        "document nor in the database.")
    current = {}
    for row in (Allocation.objects.filter(consumer__uuid__in=list(allocations))
                .values("consumer__uuid", "provider__uuid", "resource_class__name", "used")):
        held = current.setdefault(row["consumer__uuid"], {})
        held.setdefault(row["provider__uuid"], {})[row["resource_class__name"]] = row["used"]
    wanted = {}
    for consumer, entry in allocations.items():
        resources = {rp: dict(v["resources"]) for rp, v in entry["allocations"].items()
                     if v["resources"]}
        if consumer in current:
            if current[consumer] != resources:
                raise TreeError(f"Conflict: consumer {consumer} already holds other "
                                "allocations than the document's.")
            wanted[consumer] = None  # unchanged
        elif resources:
            wanted[consumer] = entry
    return wanted


class _Refused:
    """Turns a service's refusal of `what` into a TreeError that says what was refused."""

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if isinstance(exc, DomainError):
            raise TreeError(f"{self.what} refused: {exc.message}") from exc
        return False


def _ensure_names(document, providers):
    classes = set(document.get("resource_classes", []))
    traits = set(document.get("traits", []))
    for spec in providers:
        classes.update(n for n in spec.get("inventories", {}) if rules.is_custom(n))
        traits.update(n for n in spec.get("traits", []) if rules.is_custom(n))
    for entry in document.get("allocations", {}).values():
        for alloc in entry["allocations"].values():
            classes.update(n for n in alloc["resources"] if rules.is_custom(n))
    for name in sorted(classes):
        with _Refused(f"Resource class {name}"):
            resource_class_ensure(name=name)
    for name in sorted(traits):
        with _Refused(f"Trait {name}"):
            trait_ensure(name=name)


def _normalized(records):
    result = {}
    for name, record in records.items():
        full = dict(INVENTORY_DEFAULTS)
        full.update(record)
        result[name] = {f: (float(full[f]) if f == "allocation_ratio" else int(full[f]))
                        for f in INVENTORY_FIELDS}
    return result


def _import_provider(spec, current, report):
    uuid, name = spec["uuid"], spec["name"]
    label = f"{name} ({uuid})"
    with _Refused(f"Provider {label}"):
        if current is None:
            provider = provider_create(
                uuid=uuid, name=name, parent_uuid=spec.get("parent_provider_uuid"))
            have_inv, have_traits, have_aggs = {}, set(), set()
        else:
            provider = ResourceProvider.objects.get(uuid=uuid)
            have_inv = _normalized(current["inventories"])
            have_traits, have_aggs = current["traits"], current["aggregates"]
        changed = []
        want_inv = _normalized(spec.get("inventories", {}))
        if want_inv != have_inv:
            inventories_replace(
                provider=provider, generation=provider.generation, inventories=want_inv)
            changed.append("inventories")
        want_traits = set(spec.get("traits", []))
        if want_traits != have_traits:
            provider_traits_replace(
                provider=provider, trait_names=want_traits, generation=provider.generation)
            changed.append("traits")
        want_aggs = set(spec.get("aggregates", []))
        if want_aggs != have_aggs:
            aggregates_replace(
                provider=provider, aggregate_uuids=sorted(want_aggs),
                generation=provider.generation)
            changed.append("aggregates")
    if current is None:
        report.created.append(label)
    elif changed:
        report.updated.append((label, changed))
    else:
        report.unchanged.append(label)


def _import_consumers(wanted, report, progress):
    new = []
    for consumer, entry in wanted.items():
        if entry is None:
            report.consumers_unchanged.append(consumer)
            if progress:
                progress()
            continue
        # consumer_type None leaves a new consumer untyped, as a write below 1.38 does
        new.append(allocation_services.ConsumerAllocations(
            consumer_uuid=consumer, project_id=entry["project_id"],
            user_id=entry["user_id"],
            allocations={rp: held["resources"] for rp, held in entry["allocations"].items()},
            consumer_type=entry.get("consumer_type"), generation=None))
    if new:
        with _Refused("Allocations"):
            allocation_services.allocations_replace_in_transaction(consumers=new)
        report.consumers_created.extend(c.consumer_uuid for c in new)
        for _ in new:
            if progress:
                progress()
