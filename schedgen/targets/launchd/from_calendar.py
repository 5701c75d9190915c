"""launchd StartCalendarInterval dicts → the fewest cron expressions with the same times.

The inverse of schedgen.calendar. A dict fires when every key in it matches (a
missing key is a wildcard; Weekday 0 and 7 are Sunday; when a dict has both Day
and Weekday, launchd.plist(5) says either one matching is enough, like cron).
Each dict is a box: a product of value sets over (Month, Day, Weekday, Hour,
Minute). Boxes that agree on all but one key are merged (the union of a product
along one axis is still a product) until nothing changes; then a Day-only box and
a Weekday-only box with the same times become one cron line, since cron ORs its
two day fields when both are restricted. Every step keeps the set of times exactly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from schedgen.schedule.expressions import MONTH_DAYS, cron_field

KEYS = ("Month", "Day", "Weekday", "Hour", "Minute")
_RANGES = {"Month": (1, 12), "Day": (1, 31), "Weekday": (0, 7), "Hour": (0, 23), "Minute": (0, 59)}
FULL = (frozenset(range(1, 13)), frozenset(range(1, 32)), frozenset(range(7)),
        frozenset(range(24)), frozenset(range(60)))
Box = tuple[frozenset[int], frozenset[int], frozenset[int], frozenset[int], frozenset[int]]
Cell = tuple[int, int]  # (month, day)
_M, _D, _W, _H, _MI = range(5)


def boxes_of(entry: Any) -> list[Box]:
    """The boxes of one dict; ValueError for what launchd would not accept."""
    if not isinstance(entry, dict):
        raise ValueError(f"StartCalendarInterval entry is {type(entry).__name__}, not a dict")
    unknown = sorted(set(entry) - set(KEYS))
    if unknown:
        raise ValueError(f"StartCalendarInterval has unknown key(s) {', '.join(unknown)}")
    sets = list(FULL)
    for i, key in enumerate(KEYS):
        if key not in entry:
            continue
        value = entry[key]
        lo, hi = _RANGES[key]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"StartCalendarInterval {key} {value!r} is not an integer {lo}-{hi}")
        sets[i] = frozenset({0 if key == "Weekday" and value == 7 else value})
    if "Day" in entry and "Weekday" in entry:
        by_day = (sets[_M], sets[_D], FULL[_W], sets[_H], sets[_MI])
        by_weekday = (sets[_M], FULL[_D], sets[_W], sets[_H], sets[_MI])
        return [b for b in (by_day, by_weekday) if can_fire(b)]
    box: Box = (sets[0], sets[1], sets[2], sets[3], sets[4])
    return [box] if can_fire(box) else []


def can_fire(box: Box) -> bool:
    return any(d <= MONTH_DAYS[m] for m in box[_M] for d in box[_D])


def merge(boxes: list[Box]) -> list[Box]:
    """Merge along one axis at a time until stable, dropping boxes inside others.

    Boxes are kept with their months narrowed to where they fire, so equal firing
    means equal boxes. Along Day, boxes merge whenever one box fires as both do
    (see `_merge_days`).
    """
    current = {_narrow(b) for b in boxes}
    while True:
        before = current
        for axis in range(5):
            current = _merge_days(current) if axis == _D else _merge_axis(current, axis)
        current = {b for b in current
                   if not any(o != b and all(b[i] <= o[i] for i in range(5)) for o in current)}
        if current != before:
            continue
        # A box covered by several others together goes too; smallest first.
        kept = sorted(current, key=_order)
        for b in list(kept):
            if _covered(b, [o for o in kept if o != b]):
                kept.remove(b)
        if len(kept) == len(current):
            return kept
        current = set(kept)


def improve(boxes: list[Box], limit: int = 12) -> list[Box]:
    """Grow a box over times the others fire at anyway, when that saves a line or a box.

    "Days 1-29 or Sundays in January" plus "every day of February" is one line once
    both January boxes take February in: "1-29 1,2 0". Greedy, one value at a time,
    kept only when (lines, boxes) goes down; skipped for large sets (it is quadratic).
    """
    best = boxes
    if len(best) > limit:
        return best
    cost = (len(lines(best)), len(best))
    while True:
        for b, grown in _growths(best):
            trial = merge([grown, *(o for o in best if o != b)])
            trial_cost = (len(lines(trial)), len(trial))
            if trial_cost < cost:
                best, cost = trial, trial_cost
                break
        else:
            return best


def _growths(boxes: list[Box]) -> Iterator[tuple[Box, Box]]:
    for b in boxes:
        for axis in range(5):
            for v in sorted(FULL[axis] - b[axis]):
                part = list(b)
                part[axis] = frozenset({v})
                if can_fire(_box(tuple(part))) and _covered(_box(tuple(part)), boxes):
                    grown = list(b)
                    grown[axis] = b[axis] | {v}
                    yield b, _box(tuple(grown))


def _covered(b: Box, others: list[Box]) -> bool:
    """Whether every time ``b`` fires, one of ``others`` fires too."""
    for m in b[_M]:
        for d in b[_D]:
            if d > MONTH_DAYS[m]:
                continue
            for w in b[_W]:
                over = [o for o in others if m in o[_M] and d in o[_D] and w in o[_W]]
                if any(b[_H] <= o[_H] and b[_MI] <= o[_MI] for o in over):
                    continue
                times = {(h, mi) for o in over for h in o[_H] for mi in o[_MI]}
                if not all((h, mi) in times for h in b[_H] for mi in b[_MI]):
                    return False
    return True


def _merge_axis(boxes: set[Box], axis: int) -> set[Box]:
    groups: dict[tuple[frozenset[int], ...], set[int]] = defaultdict(set)
    for b in boxes:
        groups[b[:axis] + b[axis + 1:]] |= b[axis]
    return {_narrow(_box(rest[:axis] + (frozenset(vals),) + rest[axis:]))
            for rest, vals in groups.items()}


def _merge_days(boxes: set[Box]) -> set[Box]:
    """Union Day sets of boxes alike in (Weekday, Hour, Minute) when one box fires as all do.

    Months, and days a box's months never have, are free: January 1-30 and every day
    of February and April are one box, "1-30 1,2,4", because Feb and Apr lack day 31.
    """
    groups: dict[tuple[frozenset[int], ...], list[Box]] = defaultdict(list)
    for b in sorted(boxes, key=_order):
        groups[(b[_W], b[_H], b[_MI])].append(b)
    out: set[Box] = set()
    for (weekdays, hours, minutes), members in groups.items():
        clusters: list[tuple[frozenset[int], frozenset[int], frozenset[Cell]]] = []
        for b in members:
            cells = _cells(b[_M], b[_D])
            for i, (months, days, fired) in enumerate(clusters):
                joined = _joined(months, days, b, fired | cells, weekdays == FULL[_W])
                if joined is not None:
                    clusters[i] = (months | b[_M], joined, fired | cells)
                    break
            else:
                clusters.append((b[_M], b[_D], cells))
        out |= {_narrow((m, days, weekdays, hours, minutes)) for m, days, _ in clusters}
    return out


def _cells(months: frozenset[int], days: frozenset[int]) -> frozenset[Cell]:
    """The (month, day) dates a box fires on; leap-year months, so Feb 29 is one."""
    return frozenset((m, d) for m in months for d in days if d <= MONTH_DAYS[m])


def _joined(months: frozenset[int], days: frozenset[int], b: Box, wanted: frozenset[Cell],
            trim: bool) -> frozenset[int] | None:
    """A Day set that, over both month sets, fires on exactly ``wanted``; else None.

    The plain union when it is exact (it keeps '*'), else the smallest set: each side
    without the days its months never have. A Weekday box is not trimmed: its Day
    stays '*', or cron would OR a restricted pair.
    """
    both = months | b[_M]
    union = days | b[_D]
    if _cells(both, union) == wanted:
        return union
    if not trim:
        return None
    least = ({d for d in days if any(d <= MONTH_DAYS[m] for m in months)}
             | {d for d in b[_D] if any(d <= MONTH_DAYS[m] for m in b[_M])})
    return frozenset(least) if _cells(both, frozenset(least)) == wanted else None


def _month_range(b: Box) -> tuple[frozenset[int], frozenset[int]]:
    """(lo, hi): any month set M with lo <= M <= hi fires exactly like the box's months,
    because the months hi adds have none of the box's days (Feb 30, Apr 31)."""
    lo = _fitting(b[_M], b[_D])
    hi = FULL[_M]
    for d in b[_D]:
        hi = hi & ((b[_M] & _fitting(FULL[_M], frozenset({d}))) | _never(frozenset({d})))
    return lo, hi


def _fitting(months: frozenset[int], days: frozenset[int]) -> frozenset[int]:
    """The months in which one of ``days`` exists."""
    return frozenset(m for m in months if any(d <= MONTH_DAYS[m] for d in days))


def _never(days: frozenset[int]) -> frozenset[int]:
    return FULL[_M] - _fitting(FULL[_M], days)


def _narrow(b: Box) -> Box:
    return (_fitting(b[_M], b[_D]), b[_D], b[_W], b[_H], b[_MI])


def _box(t: tuple[frozenset[int], ...]) -> Box:
    return (t[0], t[1], t[2], t[3], t[4])


def _order(b: Box) -> tuple[Any, ...]:
    return tuple((len(s), sorted(s)) for s in (b[_M], b[_D], b[_W], b[_H], b[_MI]))


def to_cron(entries: list[Any]) -> list[str]:
    """Cron expressions (Debian semantics) firing exactly when the dicts do."""
    return lines(improve(merge([b for e in entries for b in boxes_of(e)])))


def lines(boxes: list[Box]) -> list[str]:
    """One cron line per box, but a Day-only and a Weekday-only box with the same times
    share one: cron ORs its day fields when both are restricted."""
    day_boxes = [b for b in boxes if b[_W] == FULL[_W] and b[_D] != FULL[_D]]
    weekday_boxes = [b for b in boxes if b[_D] == FULL[_D] and b[_W] != FULL[_W]]
    partner: dict[Box, Box] = {}
    for w in weekday_boxes:
        for d in day_boxes:
            lo, hi = _month_range(d)
            if d not in partner and (d[_H], d[_MI]) == (w[_H], w[_MI]) and lo <= w[_M] <= hi:
                partner[d] = w
                break
    paired = set(partner.values())
    out: list[str] = []
    for b in boxes:
        if b in partner:
            w = partner[b]
            out.append(_expr(w[_M], b[_D], w[_W], b[_H], b[_MI]))
        elif b not in paired:
            lo, hi = _month_range(b)
            months = hi if hi == FULL[_M] else b[_M]  # "31 * *" rather than "31 1,3,5,7,8,10,12"
            out.append(_expr(months, b[_D], b[_W], b[_H], b[_MI]))
    return out


def _expr(months: frozenset[int], days: frozenset[int], weekdays: frozenset[int],
          hours: frozenset[int], minutes: frozenset[int]) -> str:
    return " ".join([
        field(minutes, 0, 59), field(hours, 0, 23),
        # A day field starting with '*' switches cron to AND: never write '*/n' there.
        field(days, 1, 31, star_step=False), field(months, 1, 12),
        field(weekdays, 0, 6, star_step=False),
    ])


def field(values: frozenset[int], lo: int, hi: int, star_step: bool = True) -> str:
    """Shortest usual spelling: '*', '*/15', '1-5', '8-18/2', '0,30', lists of those."""
    return cron_field(values, lo, hi, star_step=star_step)
