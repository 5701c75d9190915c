"""Cron expressions as launchd StartCalendarInterval dicts.

launchd fires a dict when every key in it matches; a missing key is a wildcard
and a schedule fires at the union of its dicts. This module finds the fewest
dicts whose union is exactly the set of minutes Debian cron fires on, and
refuses what launchd cannot say (both day fields restricted under cron's AND).

No dict holds Weekday together with Month or Day: launchd's documentation ANDs every
key, but its code (core.c, calendarinterval_setalarm) computes a Weekday's next firing
with cronemu_wday(weekday, hour, minute), which takes no month, and ORs it with the
Month/Day one. A dict without that pair means the same under both readings. A schedule
that needs weekdays in some months only, or a day of month AND a weekday, has no exact
dicts: widened, it gets the fewer dicts of two supersets (its weekdays in every month,
or every day of its months, Weekday dropped), and the job's gate (templates/runtime/
81-tzgate.sh) drops the fires that are not firings; not widened, it is refused.
"""

from __future__ import annotations

from schedgen.schedule.expressions import MONTH_DAYS, Cron, days_in_month

CalendarDict = dict[str, int]


# A plist with more dicts than this is refused: launchd arms a timer per dict, and a
# schedule that needs so many is better said another way (docs/launchd.md).
MAX_DICTS = 10_000


class NotExpressible(ValueError):
    pass


class NotExact(NotExpressible):
    """No dicts fire at exactly these days on every launchd: a superset needs a gate."""


_ALL_DAYS = frozenset(range(1, 32))
_ALL_WEEKDAYS = frozenset(range(7))


def _values(key: str, values: frozenset[int], full: int) -> list[dict[str, int]]:
    if len(values) == full:
        return [{}]
    return [{key: v} for v in sorted(values)]


def _date_dicts(cron: Cron, widen: bool = False) -> list[CalendarDict]:
    """The fewest (Month?, Day? | Weekday?) dicts for the cron's days. With ``widen``,
    where no dicts are exact, the smaller of two supersets (fewer dicts, then fewer
    fires a year): the weekdays in every month, or every day of the cron's months."""
    try:
        return _exact_date_dicts(cron)
    except NotExact:
        if not widen:
            raise
    if cron.day_and and not cron.days_full:
        # Both day fields restricted and ANDed: each of them alone is a superset.
        by_weekday = [{"Weekday": w} for w in sorted(cron.weekdays)]
        by_day = cron._replace(weekdays=_ALL_WEEKDAYS)
    else:
        by_weekday = _exact_date_dicts(cron, widen=True)
        by_day = cron._replace(days=_ALL_DAYS, weekdays=_ALL_WEEKDAYS, day_and=True)
    return min(by_weekday, _exact_date_dicts(by_day), key=lambda ds: (len(ds), _fires(ds)))


def _fires(dicts: list[CalendarDict]) -> int:
    """About how many days a year the date dicts fire on (a tie-break between supersets)."""
    return sum(1 if "Month" in d and "Day" in d else 12 if "Day" in d else
               MONTH_DAYS[d["Month"]] if "Month" in d else 52 if "Weekday" in d else 365
               for d in dicts)


def needs_gate(crons: list[Cron]) -> bool:
    """Do the widened dicts of these expressions fire more often than they do?"""
    for cron in crons:
        try:
            _exact_date_dicts(cron)
        except NotExact:
            return True
    return False


def _exact_date_dicts(cron: Cron, widen: bool = False) -> list[CalendarDict]:
    """The dicts for exactly the cron's days; with ``widen``, weekdays wanted in some
    months only fire in every month (a superset)."""
    months = cron.months
    # Per month: "all" (every day fires) or the days/weekdays that do.
    need_days: dict[int, frozenset[int]] = {}
    need_weekdays: dict[int, frozenset[int]] = {}
    all_months: set[int] = set()
    for m in months:
        days = days_in_month(cron, m)
        days_all = len(days) == MONTH_DAYS[m] or cron.days_full
        if cron.day_and:
            # Both must match: expressible only where one side matches every day.
            if cron.weekdays_full:
                if days_all:
                    all_months.add(m)
                elif days:
                    need_days[m] = days
            elif days_all:
                need_weekdays[m] = cron.weekdays
            elif days:
                raise NotExact(
                    f"{cron.text!r}: launchd cannot require a day of month AND a weekday "
                    "(cron does, because one day field starts with '*'); "
                    "restrict only one of the two day fields"
                )
        else:
            if days_all or cron.weekdays_full:
                all_months.add(m)
            else:
                if days:
                    need_days[m] = days
                need_weekdays[m] = cron.weekdays
    if len(all_months) == 12:
        return [{}]
    out: list[CalendarDict] = []

    def covered(m: int, key: str, v: int) -> bool:
        if m in all_months:
            return True
        need = need_days if key == "Day" else need_weekdays
        return v in need.get(m, frozenset())

    for key, need in (("Day", need_days), ("Weekday", need_weekdays)):
        wanted = sorted({v for vs in need.values() for v in vs})
        for v in wanted:
            # A month where the value cannot occur (Day 31 in April) never fires,
            # so it does not stop a month-wildcard dict.
            possible = [m for m in range(1, 13) if key == "Weekday" or v <= MONTH_DAYS[m]]
            if all(covered(m, key, v) for m in possible) or key == "Weekday" and widen:
                out.append({key: v})
            elif key == "Weekday":
                where = ",".join(str(m) for m in sorted(need) if v in need[m])
                raise NotExact(
                    f"{cron.text!r}: fires on weekday {v} in some months only (month "
                    f"{where}); launchd's documentation and its code disagree on a dict "
                    "with Weekday and Month (the code ignores the Month), so no plist fires "
                    "at exactly these times on every macOS. Restrict the month or the "
                    "weekday, not both, or split the job")
            else:
                out += [{"Month": m, key: v} for m in sorted(need) if v in need[m]]
    # A month where every day fires needs its own dict, unless month-wildcard Day
    # dicts already cover each of its days.
    wild_days = {d["Day"] for d in out if d.keys() == {"Day"}}
    whole = [{"Month": m} for m in sorted(all_months)
             if not set(range(1, MONTH_DAYS[m] + 1)) <= wild_days]
    return whole + out


def calendar_dicts(cron: Cron, widen: bool = False) -> list[CalendarDict]:
    """StartCalendarInterval dicts, keys in launchd's usual order."""
    order = ("Month", "Day", "Weekday", "Hour", "Minute")
    dates = _date_dicts(cron, widen)
    size = (len(dates) * (1 if len(cron.hours) == 24 else len(cron.hours))
            * (1 if len(cron.minutes) == 60 else len(cron.minutes)))
    if size > MAX_DICTS:
        raise NotExpressible(
            f"{cron.text!r} needs {size} StartCalendarInterval dicts; schedgen writes at "
            f"most {MAX_DICTS} to one plist. Use a step over every hour or minute "
            "('*/5' rather than a long list), or split the job")
    result = []
    for date in dates:
        for hour in _values("Hour", cron.hours, 24):
            for minute in _values("Minute", cron.minutes, 60):
                merged = {**date, **hour, **minute}
                result.append({k: merged[k] for k in order if k in merged})
    return result


def union_dicts(crons: list[Cron], widen: bool = False) -> list[CalendarDict]:
    """The dicts of every expression, each once, in first-seen order (a dict keyed by
    the dict's items: linear in the dicts, where a list's `in` made it quadratic)."""
    seen: dict[tuple[tuple[str, int], ...], CalendarDict] = {}
    for cron in crons:
        for d in calendar_dicts(cron, widen):
            seen.setdefault(tuple(d.items()), d)
            if len(seen) > MAX_DICTS:
                raise NotExpressible(
                    f"the expressions together need more than {MAX_DICTS} "
                    "StartCalendarInterval dicts, the most schedgen writes to one plist; "
                    "split the job")
    return list(seen.values())
