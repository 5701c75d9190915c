"""Cron expressions as systemd OnCalendar lines (systemd.time(7)).

An OnCalendar line is a product of value sets (weekday, year, month, day, hour,
minute, second) and a timer fires at the union of its lines, so a cron expression is
one line, except where Debian cron ORs the two day fields: systemd ANDs a weekday
with a date, so the OR becomes a date line and a weekday line. Union schedules (a
list of expressions) are merged where two lines differ in one field only.

Every line is written in systemd's normalized form (what `systemd-analyze calendar`
prints back), so the unit reads the same as systemd's own view of it.
"""

from __future__ import annotations

from typing import NamedTuple

from schedgen.schedule.expressions import Cron, days_in_month, value_runs

# systemd's week starts on Monday; cron's weekday 0 is Sunday.
_DAY_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
# (lowest, highest, has a fixed cycle): months of a year, hours of a day, minutes of an hour.
_FIELDS = {"months": (1, 12, True), "days": (1, 31, False), "hours": (0, 23, True),
           "minutes": (0, 59, True)}


class Spec(NamedTuple):
    """One OnCalendar line as sets of values (a full set means '*')."""

    weekdays: frozenset[int]  # cron numbering, 0 = Sunday
    months: frozenset[int]
    days: frozenset[int]
    hours: frozenset[int]
    minutes: frozenset[int]


_ALL = Spec(frozenset(range(7)), frozenset(range(1, 13)), frozenset(range(1, 32)),
            frozenset(range(24)), frozenset(range(60)))


def specs(cron: Cron) -> list[Spec]:
    """The fewest lines that fire on exactly the minutes Debian cron fires ``cron`` on."""
    base = Spec(_ALL.weekdays, cron.months, _ALL.days, cron.hours, cron.minutes)
    if cron.day_and or cron.days_full or cron.weekdays_full:
        # AND (a '*'-prefixed day field), or OR with one side matching every day.
        if not cron.day_and:
            return [base]
        return [base._replace(weekdays=cron.weekdays, days=cron.days)]
    out = [base._replace(weekdays=cron.weekdays)]
    # A date line that no month can hold (Feb 30) would never fire: leave it out.
    if any(days_in_month(cron, m) for m in cron.months):
        out.insert(0, base._replace(days=cron.days))
    return out


def merge(lines: list[Spec]) -> list[Spec]:
    """Union of lines: drop lines another covers, join lines that differ in one field."""
    out = list(dict.fromkeys(lines))
    changed = True
    while changed:
        changed = False
        for i, a in enumerate(out):
            for j, b in enumerate(out):
                if i == j:
                    continue
                if all(x <= y for x, y in zip(a, b, strict=True)):
                    del out[i]  # a is inside b
                    changed = True
                    break
                differ = [k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
                if len(differ) == 1:
                    k = differ[0]
                    out[i] = Spec(*(x | y if n == k else x
                                    for n, (x, y) in enumerate(zip(a, b, strict=True))))
                    del out[j]
                    changed = True
                    break
            if changed:
                break
    return out


def _terms(values: frozenset[int], lo: int, hi: int, cyclic: bool) -> str:
    """A value set in systemd's syntax: '*', 'a/s', 'a..b/s', 'a..b' and lists of them."""
    if values == frozenset(range(lo, hi + 1)):
        return "*"
    v = sorted(values)

    def fmt(n: int) -> str:
        return f"{n:02d}"

    if len(v) >= 3:
        step = v[1] - v[0]
        if all(b - a == step for a, b in zip(v, v[1:], strict=False)):
            if step == 1:
                return f"{fmt(v[0])}..{fmt(v[-1])}"
            # systemd 252 skips the first value after a carry ("00/7" minutes misses
            # 00:00 after midnight) unless the step divides the field's cycle from its
            # start; an explicit end ("00..56/7") is always right. Days have no cycle.
            if cyclic and v[0] == lo and v[-1] + step > hi and (hi - lo + 1) % step == 0:
                return f"{fmt(v[0])}/{step}"  # repeats up to the field's end
            return f"{fmt(v[0])}..{fmt(v[-1])}/{step}"
    return ",".join(value_runs(v, sep="..", fmt=fmt))


def _weekdays(days: frozenset[int]) -> str:
    """Weekdays Monday first, runs of three or more as 'Mon..Fri' (no wrap-around)."""
    monday_first = sorted((d + 6) % 7 for d in days)  # Mon = 0 ... Sun = 6
    return ",".join(value_runs(monday_first, sep="..", fmt=lambda n: _DAY_NAMES[(n + 1) % 7]))


def line(spec: Spec, zone: str | None = None) -> str:
    """One OnCalendar value; ``zone`` (an IANA name) is appended as its last word."""
    date = "*-{}-{}".format(_terms(spec.months, *_FIELDS["months"]),
                            _terms(spec.days, *_FIELDS["days"]))
    time = "{}:{}:00".format(_terms(spec.hours, *_FIELDS["hours"]),
                             _terms(spec.minutes, *_FIELDS["minutes"]))
    words = [date, time]
    if spec.weekdays != _ALL.weekdays:
        words.insert(0, _weekdays(spec.weekdays))
    if zone:
        words.append(zone)
    return " ".join(words)


def on_calendar(crons: list[Cron], zone: str | None = None) -> list[str]:
    """OnCalendar values whose union fires on exactly the minutes of ``crons``' union."""
    lines = merge([s for c in crons for s in specs(c)])
    return [line(s, zone) for s in lines]
