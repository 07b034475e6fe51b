"""A change-log entry of a provider in words, for the history timeline and its CSV.

Plain text (the page escapes it, the CSV writes it as is): "VCPU total 16 → 32
(capacity 16 → 32)", "consumer 6f1c2a9e… claimed VCPU=2 on cn0001". Consumers are
shortened on the page and whole in the CSV (short=False).
"""
from console.history.reads import capacity_of
from console.providers.change_log import fields_in_order
from providers.rules import INVENTORY_DEFAULTS

CONSUMER_SHORT = 8


def _resources(resources):
    return ", ".join(f"{rc}={amount}" for rc, amount in sorted(resources.items()))


def _consumer(uuid, short):
    return f"consumer {uuid[:CONSUMER_SHORT]}…" if short else f"consumer {uuid}"


def entry_words(entry, name, *, short=True):
    """[str]: what `entry` (console.history.reads.Entry) changed on the provider `name`."""
    before, after = entry.before or {}, entry.after or {}
    lines = []
    if entry.action == "create":
        lines.append(f"provider {name} created")
    elif entry.action == "delete":
        lines.append(f"provider {name} deleted")
    for key in ("name", "parent"):
        if key in before and key in after and before[key] != after[key]:
            lines.append(f"{key} {before[key] or 'none'} → {after[key] or 'none'}")
    if "inventories" in before or "inventories" in after:
        lines += _inventory_words(before.get("inventories") or {}, after.get("inventories") or {})
    for key, added, removed in (("traits", "trait {} added", "trait {} removed"),
                                ("aggregates", "joined aggregate {}", "left aggregate {}")):
        if key in before or key in after:
            old, new = set(before.get(key) or ()), set(after.get(key) or ())
            lines += [added.format(item) for item in sorted(new - old)]
            lines += [removed.format(item) for item in sorted(old - new)]
    if "consumers" in after:
        lines += _allocation_words(before.get("consumers"), after["consumers"], name, short)
    return lines or [f"{entry.action} (no difference recorded)"]


def _inventory_words(old, new):
    lines = []
    for rc in sorted(set(old) | set(new)):
        if rc not in old:
            # the fields a client set; the defaults would only hide them
            set_fields = [f"{field} {value}" for field, value in fields_in_order(new[rc])
                          if field == "total" or INVENTORY_DEFAULTS.get(field) != value]
            lines.append(f"{rc} added: {', '.join(set_fields)} (capacity {capacity_of(new[rc])})")
        elif rc not in new:
            lines.append(f"{rc} removed (capacity was {capacity_of(old[rc])})")
        else:
            changed = [f"{field} {old[rc].get(field)} → {value}"
                       for field, value in fields_in_order(new[rc]) if old[rc].get(field) != value]
            if changed:
                was, now = capacity_of(old[rc]), capacity_of(new[rc])
                capacity = f" (capacity {was} → {now})" if was != now else ""
                lines.append(f"{rc} " + ", ".join(changed) + capacity)
    return lines


def _allocation_words(held, holds, name, short):
    lines = []
    for consumer in sorted(set(held or {}) | set(holds)):
        was, now = (held or {}).get(consumer) or {}, holds.get(consumer) or {}
        who = _consumer(consumer, short)
        if held is None:  # what it held before was not recorded
            lines.append(f"{who} now holds {_resources(now) or 'nothing'} on {name}")
        elif not was and now:
            lines.append(f"{who} claimed {_resources(now)} on {name}")
        elif was and not now:
            lines.append(f"{who} released {_resources(was)} on {name}")
        elif was != now:
            lines.append(f"{who} changed {_resources(was)} → {_resources(now)} on {name}")
    return lines
