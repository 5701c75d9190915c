"""A zoned schedule as host-local times: what cron and launchd must fire at.

Neither Debian cron nor launchd knows another zone, so a job in zone Z fires on the
host at every host-local minute that can be a matching Z-local minute under any pair of
UTC offsets the two zones hold at the same time (taken from their transitions over a
window of years), and the job's gate (templates/runtime/81-tzgate.sh) runs the command only when
the Z-local time matches. Two more things come from the transitions:

- a fixed-time firing inside a spring-forward gap runs once right after the gap
  (Debian cron, cronsim): those instants are listed for the gate (`gap_firings`) and
  fired at too;
- in the host's own DST hours a host line must follow real time, or the host's cron
  would fire a fixed line once in a repeated hour and late after a gap: there the
  minute field is written as a step (`*/n`), which Debian cron treats as wildcard.

Every host minute belongs to exactly one cron line, so the gate never sees two fires
of one minute. Pure: no clock, no files; the window is given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from typing import NamedTuple

from schedgen.schedule.expressions import MACROS, Cron, value_runs
from schedgen.schedule.to_calendar import CalendarDict, union_dicts

WINDOW_YEARS = 10
ALL_MONTHS = frozenset(range(1, 13))
ALL_DAYS = frozenset(range(1, 32))
ALL_WEEKDAYS = frozenset(range(7))
_STEP = timedelta(days=1)  # no zone changes its offset twice within a day


class Window(NamedTuple):
    start: datetime  # UTC
    end: datetime

    @classmethod
    def years(cls, first: int, count: int = WINDOW_YEARS) -> Window:
        return cls(datetime(first, 1, 1, tzinfo=UTC), datetime(first + count, 1, 1, tzinfo=UTC))


class Transition(NamedTuple):
    at: datetime  # UTC instant of the change
    before: int  # UTC offset in minutes until then
    after: int  # and from then on


def _offset(zone: tzinfo, at: datetime) -> int:
    off = at.astimezone(zone).utcoffset()
    assert off is not None
    return int(off.total_seconds()) // 60


@lru_cache(maxsize=64)
def transitions(zone: tzinfo, window: Window) -> tuple[Transition, ...]:
    """Every change of UTC offset in the window, to the minute."""
    out = []
    t, off = window.start, _offset(zone, window.start)
    while t < window.end:
        nxt = min(t + _STEP, window.end)
        new = _offset(zone, nxt)
        if new != off:
            lo, hi = t, nxt  # offset(lo) == off, offset(hi) == new
            while hi - lo > timedelta(minutes=1):
                mid = lo + (hi - lo) / 2
                mid = mid.replace(second=0, microsecond=0)
                if mid <= lo:
                    mid = lo + timedelta(minutes=1)
                if _offset(zone, mid) == off:
                    lo = mid
                else:
                    hi = mid
            out.append(Transition(hi, off, new))
            off = new
        t = nxt
    return tuple(out)


def shifts(zone: tzinfo, host: tzinfo, window: Window) -> frozenset[int]:
    """host offset - zone offset (minutes), for every pair that holds at some instant."""
    points = {window.start} | {t.at for t in transitions(zone, window)}
    points |= {t.at for t in transitions(host, window)}
    return frozenset(_offset(host, p) - _offset(zone, p) for p in points)


def host_dst_hours(host: tzinfo, window: Window) -> frozenset[int]:
    """Host-local hours that a gap or a repeated period touches on some day."""
    hours: set[int] = set()
    for tr in transitions(host, window):
        # Local wall times between the two readings of the clock at the change.
        a = (tr.at + timedelta(minutes=min(tr.before, tr.after))).replace(tzinfo=None)
        b = (tr.at + timedelta(minutes=max(tr.before, tr.after))).replace(tzinfo=None)
        t = a.replace(minute=0)
        while t < b:
            hours.add(t.hour)
            t += timedelta(hours=1)
    return frozenset(hours)


# -- matching in the job's zone --------------------------------------------------------

def is_fixed(cron: Cron) -> bool:
    """Debian cron: a line whose minute and hour fields do not start with '*' keeps
    fixed wall-clock times across DST; the others follow real time."""
    fields = MACROS.get(cron.text.lower(), cron.text).split()
    return not fields[0].startswith("*") and not fields[1].startswith("*")


def cron_weekday(d: datetime) -> int:
    return (d.weekday() + 1) % 7


def matches(cron: Cron, local: datetime) -> bool:
    """Does the wall time (naive or aware, its own fields) match, by Debian's day rule."""
    if local.minute not in cron.minutes or local.hour not in cron.hours:
        return False
    if local.month not in cron.months:
        return False
    dom, dow = local.day in cron.days, cron_weekday(local) in cron.weekdays
    return (dom and dow) if cron.day_and else (dom or dow)


def gap_firings(crons: Iterable[Cron], zone: tzinfo, window: Window) -> tuple[datetime, ...]:
    """Instants right after a spring-forward gap where a fixed-time firing moves to.

    Only those whose own local time does not match already (the gate runs those anyway).
    """
    fixed = [c for c in crons if is_fixed(c)]
    out = []
    for tr in transitions(zone, window):
        if tr.after <= tr.before:
            continue
        end = (tr.at + timedelta(minutes=tr.after)).replace(tzinfo=None)
        t = (tr.at + timedelta(minutes=tr.before)).replace(tzinfo=None)
        hit = False
        while t < end and not hit:
            hit = any(matches(c, t) for c in fixed)
            t += timedelta(minutes=1)
        if hit and not any(matches(c, end) for c in fixed):
            out.append(tr.at)
    return tuple(out)


# -- host days: which host dates a pattern may fire on -----------------------------------

class Days(NamedTuple):
    months: frozenset[int]
    days: frozenset[int]
    weekdays: frozenset[int]
    day_or: bool  # cron's OR rule: both day fields restricted

    def normal(self) -> Days:
        """The same days, or a few more, in a form cron and launchd can both say."""
        full_d, full_w = self.days == ALL_DAYS, self.weekdays == ALL_WEEKDAYS
        if self.day_or and (full_d or full_w):
            return Days(self.months, ALL_DAYS, ALL_WEEKDAYS, False)
        if not self.day_or and not full_d and not full_w:
            return Days(self.months, ALL_DAYS, self.weekdays, False)  # AND of both: wider
        return self

    def shifted(self, k: int) -> Days:
        """The host dates that are the zone dates plus ``k`` days (or a few more)."""
        if k == 0:
            return self
        weekdays = frozenset((w + k) % 7 for w in self.weekdays)
        days, months = self.days, self.months
        if days != ALL_DAYS:
            if k > 0:
                days = frozenset(d + 1 for d in days if d < 31) | (
                    {1} if max(days) >= 28 else set())
            else:
                days = frozenset(d - 1 for d in days if d > 1) | (
                    {28, 29, 30, 31} if 1 in days else set())
        if months != ALL_MONTHS:
            months = months | frozenset((m - 1 + k) % 12 + 1 for m in months)
        return Days(months, days, weekdays, self.day_or).normal()

    def union(self, other: Days | None) -> Days:
        if other is None or other == self:
            return self
        months = self.months | other.months
        if self.day_or == other.day_or:
            return Days(months, self.days | other.days, self.weekdays | other.weekdays,
                        self.day_or).normal()
        return Days(months, ALL_DAYS, ALL_WEEKDAYS, False)


def days_of(cron: Cron) -> Days:
    return Days(cron.months, cron.days, cron.weekdays, not cron.day_and).normal()


# -- the host schedule ---------------------------------------------------------------------

class HostLine(NamedTuple):
    minutes: frozenset[int]
    hours: frozenset[int]
    days: Days
    step: int | None  # set: write minutes as */step (real time in the host's DST hours)


def host_lines(crons: list[Cron], zone: tzinfo, host: tzinfo, window: Window,
               for_cron: bool = True) -> list[HostLine]:
    """Host-local patterns that together fire at every instant the gate may run at."""
    at: dict[int, Days] = {}  # host minute of the day -> the host days it fires on
    for s in sorted(shifts(zone, host, window)):
        for cron in crons:
            days = days_of(cron)
            for h in cron.hours:
                for m in cron.minutes:
                    k, tod = divmod(h * 60 + m + s, 1440)
                    at[tod] = days.shifted(k).union(at.get(tod))
    for t in gap_firings(crons, zone, window):
        lt = t.astimezone(host)
        tod = lt.hour * 60 + lt.minute
        at[tod] = Days(frozenset({lt.month}), frozenset({lt.day}), ALL_WEEKDAYS,
                       False).union(at.get(tod))
    dst_hours = host_dst_hours(host, window) if for_cron else frozenset()
    # A step line fires at more minutes than asked: give its hour one set of days, so no
    # other line fires in that hour.
    for h in dst_hours:
        tods = [tod for tod in at if tod // 60 == h]
        merged: Days | None = None
        for tod in tods:
            merged = at[tod].union(merged)
        for tod in tods:
            assert merged is not None
            at[tod] = merged
    by_days: dict[Days, dict[int, set[int]]] = {}
    for tod, days in at.items():
        by_days.setdefault(days, {}).setdefault(tod // 60, set()).add(tod % 60)
    lines: list[HostLine] = []
    for days, hours in sorted(by_days.items(), key=lambda kv: (min(kv[1]), min(kv[1][min(kv[1])]))):
        grouped: dict[tuple[frozenset[int], int | None], set[int]] = {}
        for h, minutes in sorted(hours.items()):
            step = _exact_step(minutes) if for_cron else None
            if h in dst_hours and step is None:
                step = math.gcd(*minutes) if minutes != {0} else 30
            grouped.setdefault((frozenset(minutes), step), set()).add(h)
        for (mins, step), hs in grouped.items():
            lines.append(HostLine(mins, frozenset(hs), days, step))
    return lines


def _exact_step(minutes: set[int]) -> int | None:
    """n when the minutes are exactly what */n names (so cron reads them as real time)."""
    ordered = sorted(minutes)
    if len(ordered) < 2 or ordered[0] != 0:
        return None
    n = ordered[1]
    return n if ordered == list(range(0, 60, n)) else None


def _field(values: frozenset[int], lo: int, hi: int) -> str:
    return "*" if values == frozenset(range(lo, hi + 1)) else ",".join(value_runs(values))


def cron_text(line: HostLine) -> str:
    """A 5-field expression whose Debian meaning is the line's host minutes (or more)."""
    if line.step is None:
        minute = _field(line.minutes, 0, 59)
    else:
        minute = "*" if line.step == 1 else f"*/{line.step}"
    d = line.days
    dom, dow = _field(d.days, 1, 31), _field(d.weekdays, 0, 6)
    # normal() leaves one day field full unless the rule is OR; "*" then keeps cron's AND.
    return f"{minute} {_field(line.hours, 0, 23)} {dom} {_field(d.months, 1, 12)} {dow}"


def as_cron(line: HostLine) -> Cron:
    d = line.days
    return Cron(text=cron_text(line), minutes=line.minutes, hours=line.hours, days=d.days,
                months=d.months, weekdays=d.weekdays, day_and=not d.day_or)


def cron_lines(crons: list[Cron], zone: tzinfo, host: tzinfo, window: Window) -> list[str]:
    return [cron_text(line) for line in host_lines(crons, zone, host, window)]


def calendar(crons: list[Cron], zone: tzinfo, host: tzinfo,
             window: Window) -> list[CalendarDict]:
    # Widened: weekdays fire in every month (never Weekday with Month, which launchd's
    # code reads otherwise than its documentation); the gate drops what is not a firing.
    lines = host_lines(crons, zone, host, window, for_cron=False)
    return union_dicts([as_cron(line) for line in lines], widen=True)
