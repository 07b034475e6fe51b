"""The reasons of the "why not?" explainer (candidates.explain): one builder per kind.

Pure code. Each builder returns a plain dict, the unit of the explainer's JSON::

    {"kind": "capacity", "group": "1", "message": "VCPU: needs 4, free 2 (capacity 16,
     used 14)", "details": {"resource_class": "VCPU", "requested": 4, "free": 2, ...}}

``kind`` is one of the constants below (stable, for scripts); ``group`` the suffix of
the request group the reason belongs to ("" the unsuffixed group, None request-wide or
tree-wide); ``message`` is for people; ``details`` holds the names and numbers the
message is made of. Providers, traits, aggregates and classes appear by name (uuid for
aggregates and in_tree), never by database id.
"""
from providers.rules import reported_capacity

# --- one provider ---------------------------------------------------------------------
NO_INVENTORY = "no_inventory"            # no inventory of a requested class
CAPACITY = "capacity"                    # not enough free capacity (numbers in details)
MAX_UNIT = "max_unit"
MIN_UNIT = "min_unit"
STEP_SIZE = "step_size"
MISSING_TRAIT = "missing_trait"          # lacks (every trait of) a required any-of set
FORBIDDEN_TRAIT = "forbidden_trait"
NOT_IN_AGGREGATE = "not_in_aggregate"    # positive member_of clause not met
FORBIDDEN_AGGREGATE = "forbidden_aggregate"
# --- one tree -------------------------------------------------------------------------
IN_TREE = "in_tree"                      # the tree is outside the group's in_tree tree
ROOT_REQUIRED = "root_required"          # the root lacks a root_required trait
ROOT_FORBIDDEN = "root_forbidden"        # the root has a root_required !trait
ROOT_MEMBER_OF = "root_member_of"        # the root is in no aggregate of a root_member_of
ROOT_FORBIDDEN_AGGREGATE = "root_forbidden_aggregate"   # ... in a root_member_of=!agg
NO_PROVIDER = "no_provider"              # unsuffixed group: no provider can supply a class
RESOURCELESS_UNFILTERED = "resourceless_unfiltered"   # Quirk Q5
ISOLATE = "isolate"                      # group_policy=isolate or the isolate extension
SAME_SUBTREE = "same_subtree"
SAME_TREE = "same_tree"                  # below 1.29: two providers of one tree
SHARING_ONLY = "sharing_only"            # candidates only from other trees' sharing providers
NO_CANDIDATE = "no_candidate"            # fallback: none of the above found
# --- the request ----------------------------------------------------------------------
STOPPED = "stopped"                      # a step of §3.6 proved the answer empty
LIMIT = "limit"                          # limit / max_allocation_candidates cut the answer


def reason(kind, message, group=None, **details):
    return {"kind": kind, "group": group, "message": message, "details": details}


def group_name(suffix):
    """How messages name a request group."""
    return "the unsuffixed group" if suffix == "" else f"group {suffix}"


def _names(items):
    return ", ".join(sorted(items))


# --- one provider -----------------------------------------------------------------------


def no_inventory(group, rc_name):
    return reason(NO_INVENTORY, f"no inventory of {rc_name}", group, resource_class=rc_name)


def misfit(group, rc_name, requested, rule, used, total, reserved, ratio, min_unit, max_unit,
           step_size):
    """Why `requested` of rc_name does not fit an inventory; rule: a
    candidate_set.misfit() answer (MIN_UNIT, MAX_UNIT, STEP_SIZE or CAPACITY)."""
    if rule == CAPACITY:
        capacity = reported_capacity(total, reserved, ratio)
        free = max(capacity - used, 0)
        return reason(CAPACITY, f"{rc_name}: needs {requested}, free {free} "
                                f"(capacity {capacity}, used {used})", group,
                      resource_class=rc_name, requested=requested, free=free,
                      capacity=capacity, used=used, total=total, reserved=reserved,
                      allocation_ratio=ratio)
    if rule == MAX_UNIT:
        return reason(MAX_UNIT, f"{rc_name}: max_unit {max_unit} < {requested}", group,
                      resource_class=rc_name, requested=requested, max_unit=max_unit)
    if rule == MIN_UNIT:
        return reason(MIN_UNIT, f"{rc_name}: min_unit {min_unit} > {requested}", group,
                      resource_class=rc_name, requested=requested, min_unit=min_unit)
    return reason(STEP_SIZE, f"{rc_name}: {requested} is not a multiple of step_size "
                             f"{step_size}", group,
                  resource_class=rc_name, requested=requested, step_size=step_size)


def missing_trait(group, any_of):
    """Lacks every trait of one required any-of set (one trait unless `in:` was used)."""
    if len(any_of) == 1:
        message = f"missing trait {next(iter(any_of))}"
    else:
        message = f"missing all of the traits {_names(any_of)} (needs one)"
    return reason(MISSING_TRAIT, message, group, traits=sorted(any_of))


def forbidden_trait(group, traits):
    word = "trait" if len(traits) == 1 else "traits"
    return reason(FORBIDDEN_TRAIT, f"has forbidden {word} {_names(traits)}", group,
                  traits=sorted(traits))


def not_in_aggregate(group, any_of, root_too=False):
    """Not a member of any aggregate of one positive member_of clause; root_too: nor is
    the root of its tree (which would span the tree for the unsuffixed group)."""
    message = f"not in aggregate(s) {_names(any_of)}"
    if root_too:
        message += " (nor is its root)"
    return reason(NOT_IN_AGGREGATE, message, group, aggregates=sorted(any_of))


def forbidden_aggregate(group, aggregates, via_root=False):
    """In a forbidden aggregate; via_root: its tree's root is (the unsuffixed group then
    takes nothing from the tree)."""
    where = "root in" if via_root else "in"
    message = f"{where} forbidden aggregate(s) {_names(aggregates)}"
    return reason(FORBIDDEN_AGGREGATE, message, group, aggregates=sorted(aggregates),
                  via_root=via_root)


def outside_in_tree(group, in_tree):
    return reason(IN_TREE, f"outside in_tree {in_tree}", group, in_tree=in_tree)


# --- one tree ---------------------------------------------------------------------------


def root_lacks(traits):
    word = "trait" if len(traits) == 1 else "traits"
    return reason(ROOT_REQUIRED, f"root lacks required {word} {_names(traits)}",
                  traits=sorted(traits))


def root_has_forbidden(traits):
    word = "trait" if len(traits) == 1 else "traits"
    return reason(ROOT_FORBIDDEN, f"root has forbidden {word} {_names(traits)}",
                  traits=sorted(traits))


def root_not_in_aggregates(any_of):
    """The root is in no aggregate of one root_member_of clause (extension)."""
    value = next(iter(any_of)) if len(any_of) == 1 else "in:" + ",".join(sorted(any_of))
    return reason(ROOT_MEMBER_OF, f"root is in no aggregate of root_member_of={value}",
                  aggregates=sorted(any_of))


def root_in_forbidden_aggregates(aggregates):
    word = "aggregate" if len(aggregates) == 1 else "aggregates"
    return reason(ROOT_FORBIDDEN_AGGREGATE,
                  f"root is in forbidden {word} {_names(aggregates)}",
                  aggregates=sorted(aggregates))


def no_provider(group, rc_name, requested, with_inventory):
    """No provider of the tree (nor a sharing provider) can supply rc_name:requested to
    the unsuffixed group; with_inventory: how many have inventory of the class."""
    if with_inventory:
        message = (f"{rc_name}:{requested}: none of the {with_inventory} provider(s) with "
                   f"{rc_name} inventory can supply it")
    else:
        message = f"{rc_name}:{requested}: no provider here has {rc_name} inventory"
    return reason(NO_PROVIDER, message, group, resource_class=rc_name, requested=requested,
                  providers_with_inventory=with_inventory)


def traits_not_together(group, any_of, suppliers):
    """Unsuffixed group: the providers able to supply its classes (`suppliers`, names)
    lack a required any-of set, alone or together (§4.2: only the chosen providers'
    traits count)."""
    need = next(iter(any_of)) if len(any_of) == 1 else f"one of {_names(any_of)}"
    return reason(MISSING_TRAIT, f"missing trait {need}: no provider able to supply the "
                                 f"group ({_names(suppliers)}) has it", group,
                  traits=sorted(any_of), providers=sorted(suppliers))


def no_choice_has_traits(group, suppliers):
    return reason(MISSING_TRAIT, "no choice of one provider per resource class "
                                 f"({_names(suppliers)}) has all the required traits "
                                 "together", group, providers=sorted(suppliers))


def resourceless_unfiltered(group):
    return reason(RESOURCELESS_UNFILTERED,
                  "a resourceless group without a required trait or member_of matches no "
                  "provider (in_tree is ignored for it)", group)


def isolate(suffix_a, suffix_b, provider, rule="group_policy=isolate"):
    """rule: the parameter that isolates the groups (group_policy=isolate, or isolate)."""
    return reason(ISOLATE, f"{rule}: {group_name(suffix_a)} and "
                           f"{group_name(suffix_b)} would share provider {provider}",
                  groups=[suffix_a, suffix_b], provider=provider)


def same_subtree(suffixes, providers):
    return reason(SAME_SUBTREE, f"same_subtree={','.join(suffixes)}: providers "
                                f"{', '.join(providers)} are not in one subtree",
                  groups=list(suffixes), providers=list(providers))


def combined(rule, rc_name, provider, requested, used, total, reserved, ratio, max_unit):
    """Several groups' amounts of one class on one provider, summed, no longer fit."""
    if rule == CAPACITY:
        capacity = reported_capacity(total, reserved, ratio)
        free = max(capacity - used, 0)
        message = (f"{rc_name} on {provider}: the groups together need {requested}, free "
                   f"{free} (capacity {capacity}, used {used})")
        return reason(CAPACITY, message, resource_class=rc_name, provider=provider,
                      requested=requested, free=free, capacity=capacity, used=used,
                      combined=True)
    return reason(MAX_UNIT, f"{rc_name} on {provider}: the groups together need "
                            f"{requested}, max_unit {max_unit} < {requested}",
                  resource_class=rc_name, provider=provider, requested=requested,
                  max_unit=max_unit, combined=True)


def same_tree(providers):
    return reason(SAME_TREE, "below microversion 1.29 a candidate may not use two providers "
                             f"of one tree ({', '.join(providers)})", providers=list(providers))


def sharing_only(providers):
    return reason(SHARING_ONLY, "every candidate built around this tree takes all its "
                                f"resources from sharing providers of other trees "
                                f"({_names(providers)})", providers=sorted(providers))


def no_candidate(group=None):
    return reason(NO_CANDIDATE, "no provider or set of providers satisfies the request here",
                  group)


def rejected_more(kind, count):
    """How many more combinations were refused for the same kind of reason."""
    return reason(kind, f"… and {count} more combination(s) refused for the same kind of "
                        "reason", more=count)


# --- the request ------------------------------------------------------------------------


def stopped(message):
    return reason(STOPPED, f"Placement stops before looking at any tree: {message}")


def limited(limit=None, max_candidates=None):
    if limit is not None:
        return reason(LIMIT, f"limit={limit}: the answer keeps only its first {limit} "
                             "candidate(s); trees are explained as if there were no limit",
                      limit=limit)
    return reason(LIMIT, f"[placement] max_allocation_candidates = {max_candidates}: the "
                         f"answer stops after {max_candidates} candidate(s); trees are "
                         "explained as if there were no such cap",
                  max_allocation_candidates=max_candidates)


# --- summaries --------------------------------------------------------------------------


def summary_label(reason):
    """The short label under which the page's summary counts a reason: its kind with the
    class, traits or aggregates it is about, without the numbers (which differ from
    provider to provider)."""
    kind, details = reason["kind"], reason["details"]
    rc = details.get("resource_class")
    if kind == CAPACITY:
        label = f"not enough free {rc}"
    elif kind in (MAX_UNIT, MIN_UNIT, STEP_SIZE):
        label = f"{rc}: {kind} does not allow the amount"
    elif kind == NO_INVENTORY:
        label = f"no inventory of {rc}"
    elif kind == NO_PROVIDER:
        label = f"no provider can supply {rc}"
    elif kind in (MISSING_TRAIT, FORBIDDEN_TRAIT) and details.get("traits"):
        word = "missing" if kind == MISSING_TRAIT else "has forbidden"
        label = f"{word} trait {' or '.join(details['traits'])}"
    elif kind in (NOT_IN_AGGREGATE, FORBIDDEN_AGGREGATE):
        word = "not in" if kind == NOT_IN_AGGREGATE else "in forbidden"
        label = f"{word} aggregate {', '.join(details['aggregates'])}"
    elif kind in (ROOT_REQUIRED, ROOT_FORBIDDEN):
        label = reason["message"]
    else:
        label = kind.replace("_", " ")
    group = reason.get("group")
    return f"resources{group}: {label}" if group else label
