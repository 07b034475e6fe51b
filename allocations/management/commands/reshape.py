"""manage.py reshape: apply a POST /reshaper payload offline, or preview it.

Apply a reshaper payload (the JSON body of POST /reshaper) without a running server: the
endpoint's schema for the microversion, then the same reshape service and single
transaction as the endpoint. Prints the inventories and allocations that change (before
-> after). --dry-run shows the same but rolls everything back.
"""
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from allocations.models import Allocation
from allocations.payloads import reshape_arguments, reshaper_schema
from allocations.reshaper import reshape
from foundation.actor import ActorCommandMixin
from foundation.api import microversion
from foundation.api.exceptions import domain_error_status
from foundation.domain_errors import DEFAULT_CODE, DomainError
from foundation.jsonfile import read_json_file
from foundation.jsonschemas import validate
from providers.models import Inventory, ResourceProvider
from providers.rules import INVENTORY_DEFAULTS as DEFAULTS
from providers.rules import INVENTORY_FIELDS


class Command(ActorCommandMixin, BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE", help="JSON file with the reshaper body.")
        parser.add_argument("--dry-run", action="store_true",
                            help="Show what would change and change nothing.")
        parser.add_argument("--microversion", default="latest",
                            help="Placement microversion of the payload, 1.30 or later "
                                 "(default: %(default)s; 1.38+ requires consumer_type).")

    def handle(self, *args, file, dry_run, microversion, **options):
        version = _version(microversion)
        payload = _read_payload(file)
        provider_uuids, consumer_uuids = _affected(payload)
        with transaction.atomic():
            before = _state(provider_uuids, consumer_uuids)
            try:
                validate(payload, reshaper_schema(version), "JSON does not validate: ")
                reshape(**reshape_arguments(version, payload))
            except DomainError as exc:  # the schema's 400 too
                raise _refused(domain_error_status(exc), exc.code, exc.message)
            after = _state(provider_uuids, consumer_uuids)
            if dry_run:
                transaction.set_rollback(True)
        lines = list(_diff(before, after))
        for line in lines or ["No inventory or allocation changes."]:
            self.stdout.write(line)
        if dry_run:
            self.stdout.write(self.style.WARNING("Dry run: nothing was changed."))
        else:
            self.stdout.write(self.style.SUCCESS("Reshape applied."))


def _version(text):
    """The Version of --microversion; the reshaper exists from 1.30."""
    try:
        version = microversion.negotiate(f"{microversion.SERVICE_TYPE} {text}")
    except (microversion.InvalidVersion, microversion.UnacceptableVersion) as exc:
        raise CommandError(f"--microversion: {exc}")
    if version < microversion.RESHAPER:
        raise _refused(404, None, f"The reshaper exists from microversion "
                                  f"{microversion.Version(*microversion.RESHAPER)}; "
                                  f"got {version}.")
    return version


def _refused(status, code, message):
    """The one-line error, as the endpoint would answer (status, Placement's code)."""
    return CommandError(f"Reshape refused ({status}, {code or DEFAULT_CODE}): {message}")


def _read_payload(path):
    payload = read_json_file(path, error=CommandError)
    if not isinstance(payload, dict):
        raise CommandError(f"{path} must hold a JSON object with `inventories` and "
                           "`allocations` (the POST /reshaper body).")
    return payload


def _affected(payload):
    """Provider and consumer uuids a payload may change (validation is the API's)."""
    inventories = payload.get("inventories")
    allocations = payload.get("allocations")
    providers = set(inventories) if isinstance(inventories, dict) else set()
    consumers = set(allocations) if isinstance(allocations, dict) else set()
    if isinstance(allocations, dict):
        for body in allocations.values():
            if isinstance(body, dict) and isinstance(body.get("allocations"), dict):
                providers.update(body["allocations"])
    providers.update(Allocation.objects.filter(consumer__uuid__in=consumers)
                     .values_list("provider__uuid", flat=True))
    return sorted(providers), sorted(consumers)


def _state(provider_uuids, consumer_uuids):
    providers = {uuid: {"name": name, "generation": generation, "inventories": {}}
                 for uuid, name, generation in ResourceProvider.objects
                 .filter(uuid__in=provider_uuids).values_list("uuid", "name", "generation")}
    for row in (Inventory.objects.filter(provider__uuid__in=provider_uuids)
                .values("provider__uuid", "resource_class__name", *INVENTORY_FIELDS)):
        providers[row["provider__uuid"]]["inventories"][row["resource_class__name"]] = {
            f: row[f] for f in INVENTORY_FIELDS}
    consumers = {}
    for row in (Allocation.objects.filter(consumer__uuid__in=consumer_uuids)
                .values("consumer__uuid", "consumer__generation", "provider__uuid",
                        "resource_class__name", "used")):
        entry = consumers.setdefault(row["consumer__uuid"], {
            "generation": row["consumer__generation"], "allocations": {}})
        entry["allocations"][(row["provider__uuid"], row["resource_class__name"])] = row["used"]
    return {"providers": providers, "consumers": consumers}


def _record(record):
    if record is None:
        return "(none)"
    shown = [f"total={record['total']}"]
    shown += [f"{f}={record[f]:g}" if f == "allocation_ratio" else f"{f}={record[f]}"
              for f in INVENTORY_FIELDS[1:] if record[f] != DEFAULTS[f]]
    return " ".join(shown)


def _diff(before, after):
    names = {uuid: p["name"] for side in (before, after)
             for uuid, p in side["providers"].items()}
    for uuid in sorted(set(before["providers"]) | set(after["providers"]),
                       key=lambda u: (names.get(u, ""), u)):
        old = before["providers"].get(uuid, {"generation": None, "inventories": {}})
        new = after["providers"].get(uuid, {"generation": None, "inventories": {}})
        changes = []
        for rc in sorted(set(old["inventories"]) | set(new["inventories"])):
            was, now = old["inventories"].get(rc), new["inventories"].get(rc)
            if was != now:
                changes.append(f"  inventory {rc}: {_record(was)} -> {_record(now)}")
        if changes or old["generation"] != new["generation"]:
            yield (f"Provider {names.get(uuid, '?')} ({uuid}): generation "
                   f"{old['generation']} -> {new['generation']}")
            yield from changes
    for uuid in sorted(set(before["consumers"]) | set(after["consumers"])):
        old = before["consumers"].get(uuid, {"generation": None, "allocations": {}})
        new = after["consumers"].get(uuid, {"generation": None, "allocations": {}})
        changes = []
        for rp, rc in sorted(set(old["allocations"]) | set(new["allocations"]),
                             key=lambda k: (names.get(k[0], ""), k)):
            was, now = old["allocations"].get((rp, rc)), new["allocations"].get((rp, rc))
            if was != now:
                changes.append(f"  {rc} on {names.get(rp, '?')} ({rp}): "
                               f"{'(none)' if was is None else was} -> "
                               f"{'(none)' if now is None else now}")
        if changes or old["generation"] != new["generation"]:
            gone = " (consumer removed)" if uuid not in after["consumers"] else ""
            yield (f"Consumer {uuid}: generation {_gen(old['generation'])} -> "
                   f"{_gen(new['generation'])}{gone}")
            yield from changes


def _gen(value):
    return "(none)" if value is None else value
