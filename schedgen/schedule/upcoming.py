"""Firing times of schedule entries, in a given zone (what `next` and `status` show).

Cron entries are walked with cronsim (Debian semantics, including its DST rules when
given a zone), a list of expressions is merged and deduplicated. ``@every`` counts
from when launchd loads the job, so it is shown from the start time with a note
(exact when the job only targets cron, which runs it as a step expression);
``@reboot`` has no times, only "at boot".
"""

from __future__ import annotations

import heapq
import itertools
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import NamedTuple

from schedgen.schedule.expressions import MACROS, Cron, Entry, Every, Reboot, every_as_cron


class Firings(NamedTuple):
    times: tuple[datetime, ...]
    notes: tuple[str, ...]  # what the times do not say (@every on launchd, @reboot)


def firings(entries: Sequence[Entry], n: int, start: datetime, *, launchd: bool) -> Firings:
    """The first ``n`` distinct times the entries fire after ``start``, merged.

    ``launchd``: the entries may run under launchd, whose StartInterval counts from
    when the job is loaded, so an @every has no calendar times there.
    """
    notes: list[str] = []
    streams: list[Iterator[datetime]] = []
    for entry in entries:
        if isinstance(entry, Cron):
            streams.append(cron_times(entry.text, start))
        elif isinstance(entry, Every):
            as_cron = every_as_cron(entry.seconds)
            if not launchd and as_cron:
                notes.append(f"{entry.text}: cron runs it as {as_cron!r}")
                streams.append(cron_times(as_cron, start))
            else:
                notes.append(f"{entry.text}: launchd counts from when the job is loaded; "
                             "times shown as if it were loaded at the start time")
                streams.append(_every(start, entry.seconds))
        elif isinstance(entry, Reboot):
            notes.append("at boot (@reboot)")
    return Firings(tuple(_first_distinct(heapq.merge(*streams, key=_instant), n)), tuple(notes))


def systemd_firings(entries: Sequence[Entry], n: int, start: datetime) -> Firings:
    """As `firings`, but the cron entries elapse as systemd's OnCalendar does in
    ``start``'s zone: a wall time the clocks skip (spring forward) does not elapse that
    day, and one the clocks repeat (fall back) elapses once, at its first reading (checked
    against `systemd-analyze calendar`). Debian cron instead runs a skipped fixed time right
    after the gap and repeated wildcard times twice."""
    zone = start.tzinfo
    if zone is None:
        return firings(entries, n, start, launchd=False)
    rest = [e for e in entries if not isinstance(e, Cron)]
    streams: list[Iterator[datetime]] = [_systemd_times(e.text, start) for e in entries
                                         if isinstance(e, Cron)]
    notes: tuple[str, ...] = ()
    if rest:
        other = firings(rest, n, start, launchd=False)
        streams.append(iter(other.times))
        notes = other.notes
    return Firings(tuple(_first_distinct(heapq.merge(*streams, key=_instant), n)), notes)


def _systemd_times(expr: str, start: datetime) -> Iterator[datetime]:
    from cronsim import CronSim

    zone = start.tzinfo
    assert zone is not None
    after = start.astimezone(UTC)
    # From a little before the start's wall time: in a repeated hour, the wall clock
    # reads earlier than times already past.
    wall = start.replace(tzinfo=None) - timedelta(hours=3)
    for t in CronSim(MACROS.get(expr.lower(), expr), wall):
        aware = t.replace(tzinfo=zone, fold=0)
        if aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != t:
            continue   # skipped by a spring-forward gap
        if aware.astimezone(UTC) > after:
            yield aware


def cron_times(expr: str, start: datetime) -> Iterator[datetime]:
    """Firing times of one cron expression strictly after ``start``."""
    from cronsim import CronSim

    return iter(CronSim(MACROS.get(expr.lower(), expr), start))


def _every(start: datetime, seconds: int) -> Iterator[datetime]:
    """Elapsed time, not wall time: across a DST change the interval stays exact."""
    if start.tzinfo is None:
        return (start + timedelta(seconds=seconds * k) for k in itertools.count(1))
    base = start.astimezone(UTC)
    zone = start.tzinfo
    return ((base + timedelta(seconds=seconds * k)).astimezone(zone) for k in itertools.count(1))


def _instant(t: datetime) -> datetime:
    """Aware times in one zone compare by wall clock (fold ignored): 01:30 EDT == 01:30 EST."""
    return t.astimezone(UTC) if t.tzinfo is not None else t


def _first_distinct(times: Iterator[datetime], n: int) -> list[datetime]:
    out: list[datetime] = []
    for t in times:
        if not out or _instant(t) != _instant(out[-1]):
            out.append(t)
        if len(out) == n:
            break
    return out


def local_zone() -> tzinfo:
    """The machine's zone as a ZoneInfo when it can be named (so DST is handled)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    tz = os.environ.get("TZ", "").lstrip(":")
    candidates = [tz] if tz else []
    try:
        target = os.readlink("/etc/localtime")
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    for name in candidates:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
    if not tz and Path("/etc/localtime").exists():
        try:
            with open("/etc/localtime", "rb") as fh:
                return ZoneInfo.from_file(fh, key="localtime")
        except (OSError, ValueError):
            pass
    return datetime.now().astimezone().tzinfo or ZoneInfo("UTC")

