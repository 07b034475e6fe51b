"""Render an engine Result as the JSON body of GET /allocation_candidates, per version.

render() gives the document as dicts and lists (the operator UI shows it); render_json()
gives the response body, built and encoded a slice of allocation requests at a time, and
render_body() the same bytes, kept in a temporary file when the answer is very large.
The ResponseView flags (request.py) say what each microversion shows:
list-form allocation requests below 1.12, `mappings` from 1.34, summary
`traits` from 1.17, every class from 1.27 (the engine already chose which
classes and providers to load), `parent_provider_uuid`/`root_provider_uuid`
from 1.29.

Large answers repeat the same few shapes: the same amounts on provider after
provider, inventories of identical hosts. Equal parts are built once and the
same (never mutated) dict or list appears wherever they occur; the encoder
writes each occurrence in full, so the JSON is unchanged.
"""
import tempfile
from itertools import islice

from providers.rules import reported_capacity


def render(result, view):
    """The response document as plain dicts and lists (allocation-candidates.md §5)."""
    return {"allocation_requests": list(_allocation_requests(result, view)),
            "provider_summaries": _provider_summaries(result, view)}


# Allocation requests render_json() builds and encodes at a time: enough that the
# encoder's cost per call vanishes, few enough that their dicts take little memory.
REQUESTS_PER_SLICE = 500


def render_json(result, view, encode):
    """render() as the JSON body, written by `encode` (data -> compact JSON bytes).

    The allocation requests, most of a large answer, are built and encoded a slice at a
    time, so that only one slice's dicts exist at once: the peak memory of a large answer
    is then that of one slice, not of every request at once."""
    return b"".join(json_pieces(result, view, encode))


# A body up to this size is built whole; a larger one is written, as it is encoded, to
# a temporary file the response is then sent from (render_body), so that the bytes of an
# 80,000-candidate answer (about 95 MB) are never all in this process's memory, and are
# encoded once.
WHOLE_BODY_BYTES = 32 * 1024 * 1024


def render_body(result, view, encode):
    """render_json()'s body as (body, None), or, past WHOLE_BODY_BYTES, as (None,
    (length, file)): its length in bytes and an unnamed temporary file holding it, read
    from its start (the caller sends it and closes it). The bytes are the same either way.

    (It was encoded twice before: once to learn the length, again as it was sent. The
    file costs a write and a read of the bytes, a small part of building and encoding
    them; they sit in the page cache, outside the worker's resident memory.)"""
    pieces = json_pieces(result, view, encode)
    head, size = [], 0
    for piece in pieces:
        head.append(piece)
        size += len(piece)
        if size > WHOLE_BODY_BYTES:
            break
    else:
        return b"".join(head), None
    spool = tempfile.TemporaryFile()
    try:
        spool.writelines(head)
        del head
        for piece in pieces:
            spool.write(piece)
            size += len(piece)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return None, (size, spool)


def json_pieces(result, view, encode):
    """render_json()'s body in pieces (bytes-like), one slice of allocation requests at
    a time."""
    requests = _allocation_requests(result, view)
    yield b'{"allocation_requests":['
    first = True
    while requests_slice := list(islice(requests, REQUESTS_PER_SLICE)):
        if not first:
            yield b","
        first = False
        yield memoryview(encode(requests_slice))[1:-1]   # the items, without [ ]
    yield b'],"provider_summaries":'
    yield encode(_provider_summaries(result, view))
    yield b"}"


def _allocation_requests(result, view):
    """The allocation requests, one at a time."""
    uuids = result.uuids
    class_names = result.class_names
    resources_of = {}   # see _resources()
    uuid_lists = {}     # (rp, ...) -> [uuid, ...]
    dict_allocations, with_mappings = view.dict_allocations, view.mappings
    for allocations, mappings in result.candidates:
        if dict_allocations:
            if len(allocations) == 1:
                # the common shape (every flat cloud's), built in one go: one provider,
                # and at most one group, which maps to it
                rp, pairs = allocations[0]
                uuid = uuids[rp]
                shown = _resources(pairs, resources_of, class_names)[1]
                entry = {"allocations": {uuid: shown}}
                if with_mappings:
                    if len(mappings) == 1 and mappings[0][1] == (rp,):
                        entry["mappings"] = {mappings[0][0]: [uuid]}
                    else:
                        entry["mappings"] = _mappings(mappings, uuids, uuid_lists)
                yield entry
                continue
            shown = {}
            for rp, pairs in allocations:
                # the cache looked up here: most of a large answer's providers repeat
                found = resources_of.get(pairs)
                if found is None:
                    found = _resources(pairs, resources_of, class_names)
                shown[uuids[rp]] = found[1]
            entry = {"allocations": shown}
        else:
            entry = {"allocations": [{"resource_provider": {"uuid": uuids[rp]},
                                      "resources": _resources(pairs, resources_of, class_names)[0]}
                                     for rp, pairs in allocations]}
        if with_mappings:
            entry["mappings"] = _mappings(mappings, uuids, uuid_lists)
        yield entry


def _resources(pairs, resources_of, class_names):
    """({class name: amount}, {"resources": that dict}) of amounts ((rc, amount), ...),
    made once per distinct amounts and kept in resources_of.

    A module function rather than a closure: compiled (candidates.compiled), a closure in
    the generator above shares its scope, and that reference cycle kept each answer's
    candidates alive until the next cyclic collection, which then had to walk them all."""
    found = resources_of.get(pairs)
    if found is None:
        amounts = {class_names[rc]: n for rc, n in pairs}
        found = resources_of[pairs] = (amounts, {"resources": amounts})
    return found


def _mappings(mappings, uuids, uuid_lists):
    """{suffix: [uuid, ...]} of a candidate's mappings; uuid_lists keeps the lists
    already made (shared, never mutated: a device is named in thousands of mappings)."""
    shown = {}
    for suffix, rps in mappings:
        names = uuid_lists.get(rps)
        if names is None:
            names = uuid_lists[rps] = [uuids[rp] for rp in rps]
        shown[suffix] = names
    return shown


def _provider_summaries(result, view):
    uuids = result.uuids
    class_names = result.class_names
    bodies, resources_of, traits_of = {}, {}, {}
    tree_fields = view.tree_summaries
    with_traits = view.traits
    for rp, uuid, parent, root, _, _, _ in result.providers:   # sql.rows.ProviderRow
        resources = resources_of[rp] = {}
        body = bodies[uuid] = {"resources": resources}
        if with_traits:
            body["traits"] = traits_of[rp] = []
        if tree_fields:
            body["parent_provider_uuid"] = uuids[parent] if parent is not None else None
            body["root_provider_uuid"] = uuids[root]
    usage = {}   # (used, total, reserved, allocation_ratio) -> {"capacity": ..., "used": ...}
    for key, rps in result.inventories:   # (sql.rows.InventoryKey, [rp, ...])
        figures = (key.used, key.total, key.reserved, key.allocation_ratio)
        shown = usage.get(figures)
        if shown is None:
            shown = usage[figures] = {
                "capacity": reported_capacity(key.total, key.reserved, key.allocation_ratio),
                "used": key.used}
        name = class_names[key.rc_id]
        for rp in rps:
            resources_of[rp][name] = shown
    for rp, name in result.traits or ():
        traits_of[rp].append(name)
    return bodies
