"""The next firing times of each job, in local time (the work behind `schedgen next`).

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
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

from schedgen.describe import describe
from schedgen.errors import UsageError
from schedgen.model import Config, Job
from schedgen.schedule import MACROS, Cron, Every, Reboot, every_as_cron


@dataclass(frozen=True)
class Upcoming:
    job: str
    description: str  # the job's own description, may be empty
    schedule: str  # the schedule as written, entries joined by " | "
    readable: str  # the schedule as a sentence
    times: tuple[datetime, ...]
    notes: tuple[str, ...]
    zone: str | None = None  # the job's `timezone`: times are in it
    marks: tuple[str, ...] = ()  # per time: what a DST change did to it, or ""
    host: tzinfo | None = None  # the host's zone, to show its reading beside


def upcoming(config: Config, names: list[str] | None, n: int,
             start: datetime | None = None) -> list[Upcoming]:
    """Next ``n`` times for the named jobs (default: every job), after ``start`` (default: now)."""
    if n < 1:
        raise UsageError("-n must be at least 1")
    if names:
        unknown = [x for x in names if config.job(x) is None]
        if unknown:
            known = ", ".join(j.name for j in config.jobs)
            raise UsageError(f"no job named {', '.join(map(repr, unknown))} in {config.path} "
                             f"(jobs: {known})")
        jobs = [j for name in dict.fromkeys(names) if (j := config.job(name)) is not None]
    else:
        jobs = list(config.jobs)
    when = start if start is not None else datetime.now(local_zone()).replace(microsecond=0)
    return [next_times(job, n, when) for job in jobs]


def next_times(job: Job, n: int, start: datetime) -> Upcoming:
    notes: list[str] = []
    times: list[datetime] = []
    host = start.tzinfo
    if job.timezone:  # read the schedule in the job's zone (cronsim applies its DST rules)
        from zoneinfo import ZoneInfo

        start = start.astimezone(ZoneInfo(job.timezone))
    if not job.enabled:
        notes.append("disabled (enabled = false): it does not run")
    else:
        streams: list[Iterator[datetime]] = []
        for entry in job.schedule:
            if isinstance(entry, Cron):
                streams.append(cron_times(entry.text, start))
            elif isinstance(entry, Every):
                as_cron = every_as_cron(entry.seconds)
                if "launchd" not in job.targets and as_cron:
                    notes.append(f"{entry.text}: cron runs it as {as_cron!r}")
                    streams.append(cron_times(as_cron, start))
                else:
                    notes.append(f"{entry.text}: launchd counts from when the job is loaded; "
                                 "times shown as if it were loaded at the start time")
                    streams.append(_every(start, entry.seconds))
            elif isinstance(entry, Reboot):
                notes.append("at boot (@reboot)")
        if job.run_at_load and "launchd" in job.targets:
            notes.append("also whenever launchd loads it (run_at_load)")
        times = _first_distinct(heapq.merge(*streams, key=_instant), n)
    marks: tuple[str, ...] = ()
    if job.timezone:
        from schedgen.tznext import dst_mark

        crons = [e for e in job.schedule if isinstance(e, Cron)]
        marks = tuple(dst_mark(t, crons) for t in times)
    return Upcoming(job=job.name, description=job.description,
                    schedule=" | ".join(job.schedule_text), readable=describe(job),
                    times=tuple(times), notes=tuple(notes), zone=job.timezone, marks=marks,
                    host=host)


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


def as_json(results: list[Upcoming]) -> dict[str, list[str]]:
    return {r.job: [t.isoformat() for t in r.times] for r in results}


def _zoned_line(r: Upcoming, i: int) -> str:
    from schedgen.tznext import host_beside

    t = r.times[i]
    text = f"  {t.strftime('%a %Y-%m-%d %H:%M %Z').rstrip()}"
    beside = host_beside(t, t.astimezone(r.host)) if r.host is not None else ""
    mark = r.marks[i] if i < len(r.marks) else ""
    extras = [x for x in (beside, mark) if x]
    return text + (f"  ({'; '.join(extras)})" if extras else "")


def as_text(results: list[Upcoming]) -> str:
    lines: list[str] = []
    for r in results:
        head = f"{r.job}: {r.description}" if r.description else r.job
        lines.append(head)
        lines.append(f"  {r.schedule}  ({r.readable})")
        if r.zone:
            lines += [_zoned_line(r, i) for i in range(len(r.times))]
        else:
            lines += [f"  {t.strftime('%a %Y-%m-%d %H:%M %Z').rstrip()}" for t in r.times]
        lines += [f"  note: {note}" for note in r.notes]
        lines.append("")
    return "\n".join(lines).rstrip("\n")
