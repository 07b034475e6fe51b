"""Render an engine Result as the JSON body of GET /allocation_candidates, per version.

The ResponseView flags (request.py) say what each microversion shows:
list-form allocation requests below 1.12, `mappings` from 1.34, summary
`traits` from 1.17, every class from 1.27 (the engine already chose which
classes and providers to load), `parent_provider_uuid`/`root_provider_uuid`
from 1.29.
"""
from providers.rules import reported_capacity


def render(result, view):
    """The response document as plain dicts and lists (allocation-candidates.md §5)."""
    uuids = result.uuids
    class_names = result.class_names
    uuid_of = uuids.__getitem__
    requests = []
    for allocations, mappings in result.candidates:
        per_provider = {}
        for (rp, rc), amount in allocations:
            uuid = uuids[rp]
            resources = per_provider.get(uuid)
            if resources is None:
                resources = per_provider[uuid] = {}
            resources[class_names[rc]] = amount
        if view.dict_allocations:
            entry = {"allocations": {uuid: {"resources": resources}
                                     for uuid, resources in per_provider.items()}}
        else:
            entry = {"allocations": [{"resource_provider": {"uuid": uuid},
                                      "resources": resources}
                                     for uuid, resources in per_provider.items()]}
        if view.mappings:
            entry["mappings"] = {suffix: list(map(uuid_of, rps)) for suffix, rps in mappings}
        requests.append(entry)
    bodies, resources_of, traits_of = {}, {}, {}
    tree_fields = view.tree_summaries
    with_traits = view.traits
    for rp, uuid, parent, root, _, _, _ in result.providers:
        resources = resources_of[rp] = {}
        body = bodies[rp] = {"resources": resources}
        if with_traits:
            body["traits"] = traits_of[rp] = []
        if tree_fields:
            body["parent_provider_uuid"] = uuids[parent] if parent is not None else None
            body["root_provider_uuid"] = uuids[root]
    for rp, rc, used, total, reserved, ratio, _, _, _ in result.inventories:
        resources_of[rp][class_names[rc]] = {
            "capacity": reported_capacity(total, reserved, ratio), "used": used}
    for rp, name in result.traits or ():
        traits_of[rp].append(name)
    summaries = {uuids[rp]: body for rp, body in bodies.items()}
    return {"allocation_requests": requests, "provider_summaries": summaries}
