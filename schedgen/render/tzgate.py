"""The time-zone gate's settings, and the same decision in Python (for tests and `next`).

The runtime's gate (templates/runtime/81-tzgate.sh) decides at each fire whether the
zone-local time is a firing; this module pre-expands each cron expression into plain
value lists so that bash only tests membership, and lists the instants a spring-forward
gap moves fixed-time firings to.
`Gate.decide` is that logic again, used to check the widened schedule against cronsim.
"""

from __future__ import annotations

import os
import shlex
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from typing import NamedTuple
from zoneinfo import ZoneInfo

from schedgen.schedule.expressions import Cron
from schedgen.schedule.tzwiden import (
    ALL_DAYS,
    ALL_MONTHS,
    ALL_WEEKDAYS,
    Window,
    gap_firings,
    is_fixed,
)
from schedgen.schedule.upcoming import local_zone

KEY = "%Y%m%d%H%M"
REPEAT_LIMIT = 180  # minutes the clock may go back and a fixed firing still counts as run
# A start with no firing in its minute runs the latest firing before it when that is
# less than this late (minutes; the job's max_lateness, docs/policies.md), and once: a
# later start is dropped.
MAX_LATENESS = 60
# How far past the bound a start still looks for a firing it came too late for (to say
# so), when the state tells which firing was decided last.
LOOK_PAST = 1440
RUN, NOT_NOW, DROPPED = 0, 1, 3  # sg_tz_gate's statuses (2, an unknown zone: not here)
# The gate's zone for a job without one: the host's own clock, read at each fire (the
# wrapper reads it without TZ). Such a job is gated when it catches up (catch_up = "once",
# every start) or when a scheduler fires a superset of its schedule (a launchd plist that
# cannot say it exactly; only the fires that pass GATE_ARG).
HOST = "localtime"
# What such a scheduler passes the job file; only its fires are gated (docs/launchd.md).
GATE_ARG = "--gate"


class Gate(NamedTuple):
    zone: str
    crons: tuple[Cron, ...]
    gaps: frozenset[str]  # zone-local keys (KEY) of moved fixed-time firings
    late: int = MAX_LATENESS * 60  # seconds: the job's max_lateness
    catch: int | None = None  # a job that catches up: no late start before its first firing

    @classmethod
    def of(cls, zone: str, crons: list[Cron], window: Window, late: int = MAX_LATENESS * 60,
           catch: int | None = None) -> Gate:
        tz = zone_of(zone)
        keys = frozenset(t.astimezone(tz).strftime(KEY) for t in gap_firings(crons, tz, window))
        return cls(zone, tuple(crons), keys, late, catch)

    def decide(self, at: datetime, state: list[int | None]) -> bool:
        """Run at instant ``at``? ``state`` is [the last fixed firing's local minute, the
        real minute (epoch / 60) of the last firing decided], updated as the gate does."""
        return self.verdict(at, state) == RUN

    def verdict(self, at: datetime, state: list[int | None]) -> int:
        """The runtime gate's status at instant ``at``: RUN, NOT_NOW or DROPPED."""
        local = at.astimezone(zone_of(self.zone))
        rmin, sec = int(at.timestamp()) // 60, local.second
        now = local_minutes(local)
        last, rlast = state
        fixed, wild = self._kinds(local.replace(tzinfo=None, second=0, microsecond=0))
        if fixed or wild:
            nlast = last
            if fixed:
                if last is not None and 0 <= last - now < REPEAT_LIMIT:
                    fixed = False
                else:
                    nlast = now
            if rlast == rmin:
                wild = False  # this very minute has run
            if not (fixed or wild):
                return NOT_NOW
            state[:] = [nlast, rmin]
            return RUN
        # A late start: the latest firing before it, on the zone's wall clock.
        if rlast is None and self.catch is not None:
            return NOT_NOW
        cap = self.late // 60 + LOOK_PAST if rlast is not None else (self.late - 1) // 60
        wall = local.replace(tzinfo=None, second=0, microsecond=0)
        k = 0
        while True:
            k += 1
            if k > cap or (rlast is not None and rmin - k <= rlast):
                return NOT_NOW
            t = wall - timedelta(minutes=k)
            if not self._hour_may(t):
                k += t.minute  # to the hour's first minute; the loop steps past it
                continue
            fixed, wild = self._kinds(t)
            if not (fixed or wild):
                continue
            lmin = now - k
            if fixed and not wild and last is not None and 0 <= last - lmin < REPEAT_LIMIT:
                return NOT_NOW
            state[:] = [lmin if fixed else last, rmin - k]
            return RUN if k * 60 + sec < self.late else DROPPED

    def _kinds(self, wall: datetime) -> tuple[bool, bool]:
        """(a fixed-time firing, a wildcard firing) at the zone-local wall time."""
        fixed = wall.strftime(KEY) in self.gaps
        wild = False
        for cron in self.crons:
            if _match(cron, wall):
                if is_fixed(cron):
                    fixed = True
                else:
                    wild = True
        return fixed, wild

    def _hour_may(self, wall: datetime) -> bool:
        """Can any firing fall in this wall-clock hour (a walk back skips it if not)?"""
        hour = wall.strftime("%Y%m%d%H")
        if any(g.startswith(hour) for g in self.gaps):
            return True
        return any(wall.hour in c.hours and _match(c, wall.replace(minute=min(c.minutes)))
                   for c in self.crons)


def zone_of(zone: str) -> tzinfo:
    """The gate's zone: an IANA name, or HOST (the host's zone as it is now)."""
    return host_zone() if zone == HOST else ZoneInfo(zone)


def _match(cron: Cron, local: datetime) -> bool:
    # The bash gate's test, written out separately from tzwiden.matches on purpose.
    weekday = int(local.strftime("%w"))
    if local.minute not in cron.minutes or local.hour not in cron.hours:
        return False
    if local.month not in cron.months:
        return False
    if not cron.day_and:
        return local.day in cron.days or weekday in cron.weekdays
    return local.day in cron.days and weekday in cron.weekdays


def local_minutes(local: datetime) -> int:
    """Minutes on the local wall clock since 1970-01-01 00:00 (what the runtime's gate computes)."""
    wall = local.replace(tzinfo=None)
    return int((wall - datetime(1970, 1, 1)).total_seconds()) // 60


def _list(values: frozenset[int], full: frozenset[int]) -> str:
    return "*" if values == full else " " + " ".join(map(str, sorted(values))) + " "


def _array(name: str, items: list[str]) -> str:
    return f"{name}=({' '.join(shlex.quote(i) for i in items)})"


def settings(gate: Gate, state_file: str, on_arg: bool = False) -> str:
    """The shell variables the runtime's gate reads, for the job file: three lines (the
    zone, its state file, the lateness bound in seconds and, for a job that catches up,
    sg_tz_catch: gate.catch; the expressions' value lists; the instants after gaps).
    ``on_arg``: a HOST gate that only a superset scheduler's fires pass (a launchd plist
    without exact dicts, for a job that neither has a zone nor catches up): its zone is
    set on a fifth line, only when the job file is called with GATE_ARG."""
    c = gate.crons
    zone = "''" if on_arg else shlex.quote(gate.zone)
    catch = f" sg_tz_catch={gate.catch}" if gate.catch is not None else ""
    lines = [
        f"sg_tz_zone={zone} sg_tz_state={shlex.quote(state_file)} "
        f"sg_tz_late={gate.late}{catch}",
        " ".join([
            f"sg_tz_n={len(c)}",
            _array("sg_tz_min", [_list(x.minutes, frozenset(range(60))) for x in c]),
            _array("sg_tz_hour", [_list(x.hours, frozenset(range(24))) for x in c]),
            _array("sg_tz_dom", [_list(x.days, ALL_DAYS) for x in c]),
            _array("sg_tz_mon", [_list(x.months, ALL_MONTHS) for x in c]),
            _array("sg_tz_dow", [_list(x.weekdays, ALL_WEEKDAYS) for x in c]),
            _array("sg_tz_or", ["0" if x.day_and else "1" for x in c]),
            _array("sg_tz_fixed", ["1" if is_fixed(x) else "0" for x in c])]),
        f"sg_tz_gaps={shlex.quote(' ' + ' '.join(sorted(gate.gaps)) + ' ')}",
    ]
    if on_arg:
        assert gate.zone == HOST
        lines += [f"# gated on the fires that pass {GATE_ARG} (a superset of the schedule)",
                  f'[ "${{1-}}" != {GATE_ARG} ] || sg_tz_zone={HOST}']
    return "\n".join(lines) + "\n"


def render_window(now: datetime | None = None) -> Window:
    """The years a rendered schedule covers: this one and the next WINDOW_YEARS - 1."""
    return Window.years((now or datetime.now(UTC)).year)


def host_zone() -> tzinfo:
    """The host's zone: one object per TZ value, so its transitions are worked out once."""
    return _host_zone(os.environ.get("TZ"))


@lru_cache(maxsize=4)
def _host_zone(tz: str | None) -> tzinfo:

    return local_zone()
