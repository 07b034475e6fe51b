"""Why not? over the whole cloud: the answer before the pages of trees.

explain(cloud=True) runs the explainer (explain/page.py, the engine's own steps) over
every tree at once (a constant number of queries) and summarize() keeps what the
cloud-wide answer needs: how many trees fit, per reason (explain.reasons.summary_label: the kind and its class, traits or
aggregates, without the numbers) how many excluded trees and providers have it, and the
CLOSEST excluded trees (closeness(): fewest reasons that no free room would cure, then
the least room missing, then by name), each with its reasons, identical siblings'
reasons collapsed (collapse_siblings).
"""
import bisect

from candidates.explain import reasons

CLOSEST = 5


def summarize(trees, *, closest=CLOSEST, whole=lambda tree: tree):
    """The cloud-wide answer of `trees` (every tree's explanation, explain's "trees",
    or of a tree that does not fit at least its reasons and its providers that have
    some, and of one that fits "fits"): {"trees", "fitting_trees", "summary": [(label,
    trees, providers)], "closest": [tree, providers collapsed, + "shortfall"]}, each
    closest tree's full explanation being whole(tree). Pure."""
    counts, fitting, near = {}, 0, []
    label = _labeller()
    for tree in trees:
        if tree["fits"]:
            fitting += 1
            continue
        _count(tree, counts, label)
        key = closeness(tree, label)
        if len(near) < closest or key < near[-1][0]:
            bisect.insort(near, (key, tree["root"]["uuid"], tree))
            del near[closest:]
    chosen = []
    for key, _, tree in near:
        tree = whole(tree)
        chosen.append(dict(tree, shortfall=key[1],
                           providers=collapse_siblings(tree["providers"])))
    summary = sorted(((label, len(roots), len(rps)) for label, (roots, rps) in counts.items()),
                     key=lambda row: (-row[1], row[0]))
    return {"trees": len(trees), "fitting_trees": fitting, "summary": summary,
            "closest": chosen}


def _labeller():
    """reasons.summary_label, worked out once per reason: the explainer says one reason
    of many providers (a missing trait, an aggregate), as one object; the reasons stay
    alive while summarize() runs, so their ids name them."""
    labels = {}

    def label(reason):
        found = labels.get(id(reason))
        if found is None:
            found = labels[id(reason)] = reasons.summary_label(reason)
        return found
    return label


def closeness(tree, label=reasons.summary_label):
    """How far an excluded tree is from fitting, smallest first: (kinds of reason that
    no amount of free room would cure, the share of each requested amount missing on the
    tree's best provider summed over the classes short of room, the name).

    A capacity shortfall ("not enough free VCPU", and "no provider can supply VCPU" when
    some provider has VCPU inventory) counts by how much is missing; anything else (a
    missing trait, no inventory at all, an aggregate) counts one whole kind."""
    hard, short = set(), {}
    for reason in tree["reasons"] + [r for p in tree["providers"] for r in p["reasons"]]:
        kind, details = reason["kind"], reason["details"]
        if kind == reasons.CAPACITY and details.get("requested"):
            key = (reason["group"], details["resource_class"])
            missing = (details["requested"] - details["free"]) / details["requested"]
            short[key] = min(short.get(key, 1.0), max(missing, 0.0))
        elif kind == reasons.NO_PROVIDER and details.get("providers_with_inventory"):
            short.setdefault((reason["group"], details["resource_class"]), 1.0)
        elif kind != reasons.NO_PROVIDER or not any(
                r["kind"] == reasons.CAPACITY for p in tree["providers"] for r in p["reasons"]):
            hard.add(label(reason))
    return (len(hard), round(sum(short.values()), 6), tree["root"]["name"])


def _count(tree, counts, label):
    """Count the tree's reasons into `counts` ({label: [root uuids, provider uuids]})."""
    root = tree["root"]["uuid"]
    for reason in tree["reasons"]:
        counts.setdefault(label(reason), [set(), set()])[0].add(root)
    for provider in tree["providers"]:
        for reason in provider["reasons"]:
            seen = counts.setdefault(label(reason), [set(), set()])
            seen[0].add(root)
            seen[1].add(provider["uuid"])


def collapse_siblings(providers, at_least=3):
    """The explanation's providers with each run of `at_least` or more consecutive
    siblings (same parent) whose reasons say the same thing folded into one entry:
    the first provider, with "siblings": how many, "last": the last one's name. Reasons
    say the same thing when their messages are equal (no reason at all is a reason too:
    480 switches without inventory are one row)."""
    out, run = [], []

    def flush():
        if len(run) >= at_least:
            out.append(dict(run[0], siblings=len(run), last=run[-1]["name"]))
        else:
            out.extend(run)
        run.clear()

    for provider in providers:
        same = (run and provider["parent_uuid"] == run[0]["parent_uuid"]
                and provider["depth"] == run[0]["depth"]
                and _said(provider) == _said(run[0]))
        if not same:
            flush()
        run.append(provider)
    flush()
    return out


def _said(provider):
    return tuple(r["message"] for r in provider["reasons"])
