"""Why one tree of a page does not fit (or, for a tree that fits, why some of its
providers take no part), asked of the engine's own predicates: candidate_set.misfit,
provider_refusals, entry_refusal, entry_anchors, traits_of_all and the problems of
combine.judge_for. `page` is the page.Page under explanation, `out` its page.Tree.
"""
from candidates import candidate_set, combine
from candidates.explain import reasons
from providers.rules import capacity

EXAMPLES_PER_KIND = 3     # refused combinations described per kind of reason


def explain_tree(page, out):
    root = out.root
    if not page.root_ok(root):
        held = page.facts.traits_of(root)
        lacking = {page.trait_name[t] for t in page.evaluation.root_required
                   if t not in held}
        bad = {page.trait_name[t] for t in page.evaluation.root_forbidden if t in held}
        if lacking:
            out.reasons.append(reasons.root_lacks(lacking))
        if bad:
            out.reasons.append(reasons.root_has_forbidden(bad))
        _root_aggregates(page, out)
        return
    failing = [i for i, per_anchor in enumerate(page.partials) if root not in per_anchor]
    for index in failing:
        before = out.reason_count()
        group = page.groups[index]
        if not group.suffixed:
            _unsuffixed(page, out, index)
        elif group.resourceless:
            _resourceless(page, out, index)
        else:
            _suffixed(page, out, index)
        if out.reason_count() == before:
            out.reasons.append(reasons.no_candidate(group.suffix))
    if failing:
        return
    if out.candidates:
        out.reasons.append(reasons.sharing_only({page.name(rp) for rp in out.sharing_used}))
        return
    _combinations(page, out)

def _root_aggregates(page, out):
    """Why the root fails root_member_of (extension): a clause none of whose aggregates
    it is in, forbidden aggregates it is in (named as the request names them)."""
    asked, evaluation = page.query.root_member_of, page.evaluation
    held = page.facts.aggregates.get(out.root, set())
    # the clauses as the root filter has them (ids), in the request's order
    for clause, ids in zip(asked.any_of, evaluation.root_member_of):
        if not candidate_set.in_aggregates(held, (ids,)):
            out.reasons.append(reasons.root_not_in_aggregates(clause))
    bad = {page.aggregate_uuid[i] for i in evaluation.root_forbidden_aggregates & held}
    if bad:
        out.reasons.append(reasons.root_in_forbidden_aggregates(bad))


def explain_providers(page, out):
    """A tree that fits: only why some of its providers take no part in a group."""
    tree_reasons = out.reasons
    out.reasons = []   # the group explainers' tree-wide findings do not apply
    for index, group in enumerate(page.groups):
        if not group.suffixed:
            _unsuffixed(page, out, index)
        elif not group.resourceless:
            _suffixed(page, out, index)
        elif group.required or group.member_of:
            _resourceless(page, out, index)
    out.reasons = tree_reasons

def _considered(page, root, index):
    """The providers of the tree, then the sharing providers of other trees serving
    it that have inventory of one of the group's classes (others are beside the
    point for a group with resources)."""
    foreign = page.sharing_for.get(root, [])
    classes = [rc for rc, _ in page.groups[index].amounts]
    if classes:
        foreign = [rp for rp in foreign if any((rp, rc) in page.rows for rc in classes)]
    return list(page.tree_rows.get(root, ())) + foreign

def _suffixed(page, out, index):
    """§4.3: one provider has all of the group's resources and passes its filters."""
    group, asked = page.groups[index], page.query.groups[index]
    suffix, facts = group.suffix, page.facts
    considered = _considered(page, out.root, index)
    if group.in_tree_root is not None and group.in_tree_root != out.root:
        out.reasons.append(reasons.outside_in_tree(suffix, asked.in_tree))
        considered = [rp for rp in considered
                      if rp in facts.sharing and facts.root[rp] == group.in_tree_root]
    elif group.in_tree_root is not None:
        considered = [rp for rp in considered if facts.root[rp] == group.in_tree_root]
    for rp in considered:
        found = list(_misfits(page, rp, index, report_missing=True))
        found += _refusals(page, rp, index)
        out.add(rp, found)

def _resourceless(page, out, index):
    """§4.3 resourceless: a provider passing the filters; Quirk Q5 without a positive
    one (in_tree is ignored)."""
    group = page.groups[index]
    if not group.required and not group.member_of:
        out.reasons.append(reasons.resourceless_unfiltered(group.suffix))
        return
    for rp in _considered(page, out.root, index):
        out.add(rp, _refusals(page, rp, index))

def _unsuffixed(page, out, index):
    """§4.2: per class an eligible entry, then the traits of the chosen ones."""
    group, asked = page.groups[index], page.query.groups[index]
    facts, filters, root, rows = page.facts, page.filters[index], out.root, page.rows
    tree_root = group.in_tree_root
    if tree_root is not None and tree_root != root:
        out.reasons.append(reasons.outside_in_tree("", asked.in_tree))
        return
    if root in filters.in_f:
        out.reasons.append(reasons.forbidden_aggregate(
            "", _aggregates(page, root, group.forbidden_aggregates), via_root=True))
    entries = [[] for _ in group.amounts]
    with_inventory = [0] * len(group.amounts)
    able = []   # providers with inventory of one of the group's classes
    for rp in _considered(page, root, index):
        if root not in _entry_anchors(page, rp, tree_root):
            continue
        found, fitting, holds_some = [], [], False
        for i, (rc, n) in enumerate(group.amounts):
            if (rp, rc) in rows:
                with_inventory[i] += 1
                holds_some = True
            if rp in page.fit_sets.get((rc, n), ()):
                fitting.append(i)
        if holds_some:
            able.append(rp)
        found += _misfits(page, rp, index, report_missing=False)
        if fitting:
            refusal = candidate_set.entry_refusal(rp, facts.root[rp], root, filters)
            if refusal is None:
                for i in fitting:
                    entries[i].append(rp)
            else:
                found += _entry_refusal(page, rp, index, refusal, root)
        out.add(rp, found)
    for i, (rc, n) in enumerate(group.amounts):
        if not entries[i]:
            out.reasons.append(reasons.no_provider("", page.class_name[rc], n,
                                                   with_inventory[i]))
    if group.required:
        _required_traits(page, out, index, entries, able)


def _entry_anchors(page, rp, tree_root):
    """candidate_set.entry_anchors as a set, worked out once a page: a sharing provider
    is considered for every tree it serves, and its anchors are every such tree."""
    key = (rp, tree_root)
    found = page.entry_anchors.get(key)
    if found is None:
        found = page.entry_anchors[key] = frozenset(
            candidate_set.entry_anchors(rp, page.facts, tree_root))
    return found


def _required_traits(page, out, index, entries, able):
    """§4.2: the chosen providers' traits together must hold every required set. With an
    entry for every class, the suppliers are those entries; without, every provider
    with inventory of a class is said to lack a set none of them has (so a reason is
    not hidden behind another: out of memory and without AVX2 shows both)."""
    asked, facts = page.query.groups[index], page.facts
    complete = all(entries)
    suppliers = sorted({rp for per_class in entries for rp in per_class}) if complete else able
    held = candidate_set.traits_of_all(facts, suppliers)
    supplier_names = {page.name(rp) for rp in suppliers}
    missing = False
    for any_of, asked_set in zip(page.groups[index].required, asked.required_sets):
        if any_of.isdisjoint(held):
            missing = True
            if complete:
                out.reasons.append(reasons.traits_not_together("", asked_set, supplier_names))
            lacking = reasons.missing_trait("", asked_set)   # one reason, said of each
            for rp in suppliers:
                out.add(rp, [lacking])
    if complete and not missing:
        out.reasons.append(reasons.no_choice_has_traits("", supplier_names))

# --- provider reasons, from the engine's predicates -------------------------------------

def _misfits(page, rp, index, report_missing):
    """Why the group's amounts do not fit rp (candidate_set.misfit on its row)."""
    group, asked = page.groups[index], page.query.groups[index]
    for (rc, n), (rc_name, _) in zip(group.amounts, asked.resources):
        if rp in page.fit_sets.get((rc, n), ()):
            continue
        row = page.rows.get((rp, rc))
        if row is None:
            if report_missing:
                yield reasons.no_inventory(group.suffix, rc_name)
            continue
        used, total, reserved, ratio, min_unit, max_unit, step = row
        rule = candidate_set.misfit(n, used, capacity(total, reserved, ratio), min_unit,
                                    max_unit, step)
        if rule is not None:
            yield reasons.misfit(group.suffix, rc_name, n, rule, used, total, reserved,
                                 ratio, min_unit, max_unit, step)

def _refusals(page, rp, index):
    """candidate_set.provider_refusals, named."""
    group, asked = page.groups[index], page.query.groups[index]
    suffix = group.suffix
    found = []
    for kind, which in candidate_set.provider_refusals(rp, page.filters[index]):
        if kind == candidate_set.FORBIDDEN_TRAIT:
            held = page.facts.traits_of(rp) & group.forbidden
            found.append(reasons.forbidden_trait(suffix, {page.trait_name[t] for t in held}))
        elif kind == candidate_set.FORBIDDEN_AGGREGATE:
            found.append(reasons.forbidden_aggregate(
                suffix, _aggregates(page, rp, group.forbidden_aggregates)))
        elif kind == candidate_set.NOT_IN_AGGREGATE:
            found.append(reasons.not_in_aggregate(suffix, asked.aggregates.any_of[which]))
        else:
            found.append(reasons.missing_trait(suffix, asked.required_sets[which]))
    return found

def _entry_refusal(page, rp, index, refusal, anchor):
    """candidate_set.entry_refusal's answer for the unsuffixed group, named."""
    group, asked = page.groups[index], page.query.groups[index]
    facts, filters = page.facts, page.filters[index]
    if refusal == candidate_set.FORBIDDEN_TRAIT:
        held = facts.traits_of(rp) & group.forbidden
        return [reasons.forbidden_trait("", {page.trait_name[t] for t in held})]
    if refusal == candidate_set.NOT_IN_AGGREGATE:
        own_tree = facts.root[rp] == anchor
        return [_not_in_aggregate(page, index, i, own_tree)
                for i, members in enumerate(filters.clause_members) if rp not in members]
    if rp in filters.in_f:
        return [reasons.forbidden_aggregate(
            "", _aggregates(page, rp, group.forbidden_aggregates))]
    return []   # the anchor root is in F: said once for the tree

def _not_in_aggregate(page, index, clause, root_too):
    """reasons.not_in_aggregate of the group's clause, one object said of every provider
    outside it (thousands of providers on a cloud-wide page)."""
    key = ("not in aggregate", index, clause, root_too)
    found = page.shared_reasons.get(key)
    if found is None:
        asked = page.query.groups[index]
        found = page.shared_reasons[key] = reasons.not_in_aggregate(
            "", asked.aggregates.any_of[clause], root_too=root_too)
    return found


def _aggregates(page, rp, ids):
    return {page.aggregate_uuid[a] for a in page.facts.aggregates.get(rp, ()) & ids}

# --- why no combination holds -----------------------------------------------------------

def _combinations(page, out):
    """Every group has partial candidates here, yet no combination was kept: say
    what the refused combinations broke (combine.judge_for's problems)."""
    per_kind = page.rejected.get(out.root, {})
    for kind, (count, problems) in per_kind.items():
        shown, messages = [], set()
        for problem in problems:
            described = _problem(page, problem)
            if described["message"] not in messages:
                messages.add(described["message"])
                shown.append(described)
        shown = shown[:EXAMPLES_PER_KIND]
        out.reasons.extend(shown)
        if count > len(shown):
            out.reasons.append(reasons.rejected_more(shown[0]["kind"], count - len(shown)))
    if not per_kind:
        out.reasons.append(reasons.no_candidate())

def _problem(page, problem):
    kind, groups, name = problem[0], page.groups, page.name
    if kind == combine.ISOLATE:
        _, i, j, rp = problem
        rule = "isolate" if page.query.isolate_parameter else "group_policy=isolate"
        return reasons.isolate(groups[i].suffix, groups[j].suffix, name(rp), rule)
    if kind == combine.SAME_SUBTREE:
        _, k, providers = problem
        return reasons.same_subtree(page.query.same_subtree[k], [name(rp) for rp in providers])
    if kind == combine.CONSOLIDATED:
        _, (rp, rc), amount, rule = problem
        used, total, reserved, ratio, max_unit = page.facts.inventory[(rp, rc)]
        return reasons.combined(rule, page.class_name.get(rc, str(rc)), name(rp), amount,
                                used, total, reserved, ratio, max_unit)
    _, providers = problem
    return reasons.same_tree([name(rp) for rp in providers])
