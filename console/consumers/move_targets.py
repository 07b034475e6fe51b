"""Where one allocation of a consumer could move: the move picker of the consumer page.

A target *fits* when allocations.rules.move_refusal, the write's own tests, has nothing
against it, so the picker offers only moves the write accepts (barring a concurrent
change). A target is *related* when it is in a tree where the consumer holds something
else, or sharing links it to such a tree (allocations.selectors.related_q); moving into
an unrelated tree splits the consumer's resources across trees (a sharing provider's
DISK_GB onto another host's tree, say), so the page asks to confirm.

The database counts, orders and pages the targets, so a page reads its 25 rows however
many providers have the class: it keeps the rows where allocations.usage.room_q
holds, the SQL twin of move_refusal (tests/providers/test_capacity_twins.py holds the
two equal), and move_refusal then judges each row read. Were the twins ever to differ,
a row the judge refuses is left out of its page (a page one short, never an offer the
write refuses).
"""
from dataclasses import dataclass

from django.core.paginator import Paginator
from django.db.models import Case, Count, IntegerField, Q, Value, When, Window

from allocations import rules, selectors
from allocations.usage import room_q
from providers.rules import reported_capacity

PER_PAGE = 25


@dataclass
class Target:
    id: int
    uuid: str
    name: str
    generation: int
    root_id: int
    capacity: int
    used: int
    free: int
    related: bool
    refusal: tuple = None   # (kind, message) from rules.move_refusal, None if it fits
    root_name: str = ""     # the tree's root, when not the provider itself (name_roots)
    difference: object = None   # console.consumers.workload.Difference, for the page's rows

    @property
    def unrelated(self):
        return not self.related

    @property
    def move_fields(self):
        """What "Move here" posts of the target (console.consumers.forms.MoveAllocationForm)."""
        return [("target", f"{self.uuid}:{self.generation}")]


@dataclass
class MoveChoice:
    page: object          # django Page of the Targets that fit: related first, then most
    #                       free room, then name
    refused: list         # Targets matching the search that do not fit, by name, at most
    #                       `refused_shown` of them (empty without a search)
    refused_count: int    # how many match the search and do not fit
    with_inventory: int   # providers (but the source) with inventory of the class
    related_roots: list   # names of the trees where the consumer holds something else


class FittingTargets:
    """The targets that fit, in the picker's order, for django's Paginator. Each row
    read carries the count of them all (a window over the same query), so count()
    reads the wanted page along; a slice is judged row by row (move_refusal)."""

    def __init__(self, rows, judge, wanted):
        self._rows, self._judge, self._first = rows, judge, (wanted - 1) * PER_PAGE
        self._read = None

    def count(self):
        if self._read is None:
            self._read = list(self._rows[self._first:self._first + PER_PAGE])
        if self._read:
            return self._read[0][-1]
        # no row from the wanted page on: none fit, or a page beyond the last one
        return self._rows.count() if self._first else 0

    def __getitem__(self, window):
        if (self._read and window.start == self._first
                and window.stop <= self._first + PER_PAGE):
            rows = self._read[:window.stop - window.start]
        else:
            rows = self._rows[window]
        return [t for t in map(self._judge, rows) if t.refusal is None]


def move_choice(*, allocation, held, query="", page=None, refused_shown=50, narrow=None):
    """The targets for `allocation` (an Allocation with provider and resource class
    loaded) of a consumer whose allocations are `held` (Allocations, provider loaded);
    `query`: a part of the provider name (case-insensitive); `page`: the page number
    asked for (as django's Paginator.get_page takes it); `narrow`: a Q on the targets
    (Inventory rows) they must also meet. At most three queries, four
    with a search that matches targets without room (one more for a page number
    beyond the last page)."""
    others = [a for a in held if a.id != allocation.id]
    roots = {a.provider.root_id for a in others}
    amount = allocation.used
    holding = {a.provider_id: a.used for a in others
               if a.resource_class_id == allocation.resource_class_id}
    # what the consumer would hold on each target (min_unit, max_unit, step_size apply
    # to that), as move_refusal counts it
    units = Case(*(When(provider_id=rp_id, then=Value(held_there + amount))
                   for rp_id, held_there in holding.items()),
                 default=Value(amount), output_field=IntegerField()) if holding else None
    fits = room_q(amount, units=units)
    needle = query.strip()
    matching = Q(provider__name__icontains=needle) if needle else Q()
    if narrow is not None:
        matching &= narrow
    targets = selectors.move_targets(resource_class_id=allocation.resource_class_id,
                                     exclude_provider_id=allocation.provider_id)
    counts = targets.aggregate(with_inventory=Count("pk"),
                               matching=Count("pk", filter=matching) if matching else Count("pk"))

    def judge(row):
        return _target(row, amount, holding)

    fitting = selectors.in_move_order(targets.filter(matching, fits), root_ids=roots)
    rows = fitting.annotate(fitting=Window(Count("pk"))).values_list(
        *selectors.MOVE_TARGET_COLUMNS, "related", "fitting")
    shown = Paginator(FittingTargets(rows, judge, _page_number(page)), PER_PAGE).get_page(page)
    refused_count = counts["matching"] - shown.paginator.count if needle else 0
    refused = []
    if refused_count:
        refused_rows = (targets.filter(matching).exclude(fits).order_by("provider__name")
                        .values_list(*selectors.MOVE_TARGET_COLUMNS)[:refused_shown])
        refused = [t for t in map(judge, refused_rows) if t.refusal is not None]
    names = selectors.provider_names(ids=roots) if roots else {}
    return MoveChoice(page=shown, refused=refused, refused_count=refused_count,
                      with_inventory=counts["with_inventory"],
                      related_roots=sorted(names.values()))


def _page_number(page):
    """The page to read along with the count: `page` if a whole number from 1 on."""
    try:
        return max(int(page), 1)
    except (TypeError, ValueError):
        return 1


def _target(row, amount, holding):
    """A Target of a selectors.MOVE_TARGET_COLUMNS row, judged by rules.move_refusal."""
    (rp_id, uuid, name, generation, root_id, total, reserved, ratio, min_unit, max_unit,
     step, used, *rest) = row
    related = bool(rest and rest[0])   # refused rows are read without it
    limits = rules.InventoryLimits(total, reserved, min_unit, max_unit, step, ratio)
    capacity = reported_capacity(total, reserved, ratio)
    return Target(rp_id, uuid, name, generation, root_id, capacity, used,
                  max(capacity - used, 0), related=related,
                  refusal=rules.move_refusal(amount, holding.get(rp_id, 0), used, limits))


def name_roots(targets):
    """Set root_name on the targets below a root; one query."""
    below = [t for t in targets if t.root_id != t.id]
    names = selectors.provider_names(ids={t.root_id for t in below}) if below else {}
    for target in below:
        target.root_name = names.get(target.root_id, "")


def is_related(*, allocation, held, target_id):
    """Whether a target provider is related to the consumer's other allocations (see
    the module docstring); at most one query."""
    roots = {a.provider.root_id for a in held if a.id != allocation.id}
    return not roots or selectors.provider_related(provider_id=target_id, root_ids=roots)
