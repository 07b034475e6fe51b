"""Readable views of GET /allocation_candidates answers for scenario tests."""
from urllib.parse import quote

from providers.models import ResourceProvider


def describe(response_json, mappings=False):
    """Sorted list of candidates as 'A(RC:n,...)+B(...)' [+ ' maps k:[A],...'] by name."""
    names = dict(ResourceProvider.objects.values_list("uuid", "name"))
    out = []
    for request in response_json["allocation_requests"]:
        allocations = request["allocations"]
        if isinstance(allocations, list):
            items = [(a["resource_provider"]["uuid"], a["resources"]) for a in allocations]
        else:
            items = [(uuid, body["resources"]) for uuid, body in allocations.items()]
        parts = sorted(
            f"{names[uuid]}({','.join(f'{rc}:{n}' for rc, n in sorted(res.items()))})"
            for uuid, res in items)
        text = "+".join(parts)
        if mappings:
            maps = ",".join(f"{suffix}:[{','.join(sorted(names[u] for u in uuids))}]"
                            for suffix, uuids in sorted(request["mappings"].items()))
            text += f" maps {maps}"
        out.append(text)
    return sorted(out)


def summary_names(response_json):
    names = dict(ResourceProvider.objects.values_list("uuid", "name"))
    return sorted(names[u] for u in response_json["provider_summaries"])


def get_candidates(api, query, version="1.36", mappings=False, status=200):
    response = api.get("/allocation_candidates?" + query, version=version)
    assert response.status_code == status, response.content
    if status != 200:
        return response
    return describe(response.json(), mappings=mappings)


def q(value):
    return quote(value, safe="")


class Counted(list):
    """A group's partial candidates that note in `seen` the index of each one the search
    looks at (by index, as the search reads them)."""

    def __init__(self, items, seen):
        super().__init__(items)
        self.seen = seen

    def __getitem__(self, index):
        self.seen.append(index)
        return list.__getitem__(self, index)
