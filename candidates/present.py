"""Render an engine Result as the JSON body of GET /allocation_candidates, per version.

The ResponseView flags (request.py) say what each microversion shows:
list-form allocation requests below 1.12, `mappings` from 1.34, summary
`traits` from 1.17, every class from 1.27 (the engine already chose which
classes and providers to load), `parent_provider_uuid`/`root_provider_uuid`
from 1.29.
"""


def render(result, view):
    """The response document as plain dicts and lists (allocation-candidates.md §5)."""
    uuids = result.uuids
    class_names = result.class_names
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
            entry["mappings"] = {suffix: [uuids[rp] for rp in rps] for suffix, rps in mappings}
        requests.append(entry)
    bodies = {}
    tree_fields = view.tree_summaries
    with_traits = view.traits
    for rp, uuid, parent, root in result.providers:
        body = bodies[rp] = {"resources": {}}
        if with_traits:
            body["traits"] = []
        if tree_fields:
            body["parent_provider_uuid"] = uuids[parent] if parent is not None else None
            body["root_provider_uuid"] = uuids[root]
    for rp, name, total, reserved, ratio, used in result.inventories:
        bodies[rp]["resources"][name] = {"capacity": int((total - reserved) * ratio),
                                         "used": used}
    for rp, name in result.traits or ():
        bodies[rp]["traits"].append(name)
    summaries = {uuids[rp]: body for rp, body in bodies.items()}
    return {"allocation_requests": requests, "provider_summaries": summaries}
