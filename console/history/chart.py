"""A resource class's history as an SVG step chart: pure geometry, no database.

step_chart() turns a Series (console.history.reads) into what
ui/_history_chart.html draws: the used step line, the capacity step line, time and
amount ticks, and a marker on each point after which used reached capacity. The
console works offline, so the chart is drawn on the server, no script.

A series of more than MAX_POINTS points is thinned to BUCKETS time slots, each kept
by its last point and its fullest one, so a spike that filled a host stays visible.
"""
import math
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from console.numbers import number

WIDTH, HEIGHT = 720, 200
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 10, 24
MAX_POINTS = 400
MAX_MARKERS = 50   # the latest fill-ups marked on a chart (a host that fills and frees all day)
BUCKETS = 200
# time tick spacings, the first that gives at most MAX_TIME_TICKS ticks is used
TIME_STEPS = (timedelta(hours=1), timedelta(hours=2), timedelta(hours=4), timedelta(hours=6),
              timedelta(hours=12), timedelta(days=1), timedelta(days=2), timedelta(days=5),
              timedelta(days=7))
MAX_TIME_TICKS = 8
MAX_AMOUNT_TICKS = 5


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    entry_id: int
    title: str


@dataclass(frozen=True)
class Chart:
    resource_class: str
    width: int
    height: int
    used_path: str
    capacity_path: str
    time_ticks: list      # [(x, label)]
    amount_ticks: list    # [(y, label)]
    markers: list         # [Marker]
    plot: tuple           # (left, top, right, bottom) of the plotting area
    unknown: tuple | None  # (x, y, width, height) of the window before the log starts
    thinned: bool


def thin(points):
    """At most about 2 × BUCKETS points: per time slot its fullest and its last."""
    if len(points) <= MAX_POINTS:
        return points, False
    first, last = points[0].at, points[-1].at
    span = (last - first).total_seconds() or 1
    slots = {}
    for index, point in enumerate(points):
        slot = min(int((point.at - first).total_seconds() / span * BUCKETS), BUCKETS - 1)
        fullest, _ = slots.get(slot, (index, index))
        if point.used > points[fullest].used:
            fullest = index
        slots[slot] = (fullest, index)
    kept = sorted({index for pair in slots.values() for index in pair} | {0})
    return [points[index] for index in kept], True


def nice_step(top, ticks):
    """A 1, 2 or 5 × 10^n step that divides 0..top into at most `ticks` steps."""
    raw = max(top / ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def step_chart(series, *, start, end, known_from=None):
    """The Chart of one Series over the window `start`..`end` (aware datetimes); the
    lines begin at the series' first point, `known_from` (where the log starts) or
    later, and the part of the window before it is marked as not recorded."""
    points, thinned = thin(series.points)
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM
    span = max((end - start).total_seconds(), 1)
    highest = max(max(point.used, point.capacity) for point in points) or 1
    step = nice_step(highest, MAX_AMOUNT_TICKS)
    top_amount = step * math.ceil(highest / step)

    def x(at):  # within the plot even for an entry stamped after `end` (a clock ahead)
        share = min(max((at - start).total_seconds(), 0) / span, 1)
        return round(LEFT + (right - LEFT) * share, 1)

    def y(amount):
        return round(bottom - (bottom - TOP) * max(amount, 0) / top_amount, 1)

    def path(value):
        moves = [f"M{x(points[0].at)},{y(value(points[0]))}"]
        for point in points[1:]:
            moves.append(f"H{x(point.at)}V{y(value(point))}")
        moves.append(f"H{right}")
        return "".join(moves)

    amount_ticks = [(y(amount), number(amount))
                    for amount in range(0, int(top_amount) + 1, int(step))]
    markers = [Marker(x(point.at), y(point.used), point.entry_id,
                      f"{series.resource_class} reached capacity: {number(point.used)} of "
                      f"{number(point.capacity)} at {_moment(point.at)}")
               for point in series.filled[-MAX_MARKERS:]]
    return Chart(series.resource_class, WIDTH, HEIGHT, path(lambda p: p.used),
                 path(lambda p: p.capacity), time_ticks(start, end, x), amount_ticks, markers,
                 (LEFT, TOP, right, bottom), _unknown(x(known_from or start), bottom), thinned)


def _unknown(known_x, bottom):
    width = round(known_x - LEFT, 1)
    return (LEFT, TOP, width, bottom - TOP) if width > 0 else None


def time_ticks(start, end, x):
    """[(x, label)]: round times between `start` and `end`, in the site's time zone."""
    span = end - start
    step = next((s for s in TIME_STEPS if span / s <= MAX_TIME_TICKS), TIME_STEPS[-1])
    local = timezone.localtime(start)
    if step >= timedelta(days=1):
        tick = local.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
        label = "%b %d"
    else:
        hours = int(step.total_seconds() // 3600)
        tick = local.replace(minute=0, second=0, microsecond=0)
        tick += timedelta(hours=hours - tick.hour % hours)
        label = "%H:%M"
    ticks = []
    while tick < end:
        ticks.append((x(tick), tick.strftime(label)))
        tick += step
    return ticks


def _moment(at):
    return timezone.localtime(at).strftime("%Y-%m-%d %H:%M:%S")
