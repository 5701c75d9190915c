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
from typing import Any

from schedgen.schedule import MONTH_DAYS

KEYS = ("Month", "Day", "Weekday", "Hour", "Minute")
_RANGES = {"Month": (1, 12), "Day": (1, 31), "Weekday": (0, 7), "Hour": (0, 23), "Minute": (0, 59)}
FULL = (frozenset(range(1, 13)), frozenset(range(1, 32)), frozenset(range(7)),
        frozenset(range(24)), frozenset(range(60)))
Box = tuple[frozenset[int], frozenset[int], frozenset[int], frozenset[int], frozenset[int]]
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
    """Merge along one axis at a time until stable, dropping boxes inside others."""
    current = set(boxes)
    while True:
        before = current
        for axis in range(5):
            groups: dict[tuple[frozenset[int], ...], set[int]] = defaultdict(set)
            for b in current:
                groups[b[:axis] + b[axis + 1:]] |= b[axis]
            current = {_box(rest[:axis] + (frozenset(vals),) + rest[axis:])
                       for rest, vals in groups.items()}
        current = {b for b in current
                   if not any(o != b and all(b[i] <= o[i] for i in range(5)) for o in current)}
        if current == before:
            return sorted(current, key=_order)


def _box(t: tuple[frozenset[int], ...]) -> Box:
    return (t[0], t[1], t[2], t[3], t[4])


def _order(b: Box) -> tuple[Any, ...]:
    return tuple((len(s), sorted(s)) for s in (b[_M], b[_D], b[_W], b[_H], b[_MI]))


def to_cron(entries: list[Any]) -> list[str]:
    """Cron expressions (Debian semantics) firing exactly when the dicts do."""
    boxes = [b for e in entries for b in boxes_of(e)]
    merged = merge(boxes)
    # Pair a Day-only box with a Weekday-only box of the same times: one OR line.
    by_day = {(b[_M], b[_H], b[_MI]): b for b in merged if b[_W] == FULL[_W] and b[_D] != FULL[_D]}
    by_weekday = {(b[_M], b[_H], b[_MI]): b for b in merged
                  if b[_D] == FULL[_D] and b[_W] != FULL[_W]}
    out: list[str] = []
    for b in merged:
        key = (b[_M], b[_H], b[_MI])
        if b[_W] == FULL[_W] and b[_D] != FULL[_D] and key in by_weekday:
            out.append(_expr(b[_M], b[_D], by_weekday[key][_W], b[_H], b[_MI]))
        elif b[_D] == FULL[_D] and b[_W] != FULL[_W] and key in by_day:
            continue  # written with its Day partner
        else:
            out.append(_expr(*b))
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
    vs = sorted(values)
    if len(vs) == hi - lo + 1:
        return "*"
    if len(vs) >= 3:
        step = vs[1] - vs[0]
        if step > 1 and all(b - a == step for a, b in zip(vs, vs[1:])):
            if star_step and vs[0] == lo and vs[-1] + step > hi:
                return f"*/{step}"
            return f"{vs[0]}-{vs[-1]}/{step}"
    parts, i = [], 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{vs[i]}-{vs[j]}")
            i = j + 1
        else:
            parts.append(str(vs[i]))
            i += 1
    return ",".join(parts)
