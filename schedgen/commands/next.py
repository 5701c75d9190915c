"""`next [JOB...] [-n N]`: the next firing times of each job, with the schedule in words."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import NamedTuple
from zoneinfo import ZoneInfo

from schedgen.config.model import Config, Job
from schedgen.config.select import load_here
from schedgen.errors import UsageError
from schedgen.machine import pause
from schedgen.render import policies
from schedgen.schedule.describe import describe_zoned
from schedgen.schedule.expressions import Cron
from schedgen.schedule.tznext import dst_mark
from schedgen.schedule.upcoming import firings, local_zone
from schedgen.targets import registry
from schedgen.units import format_duration


class Upcoming(NamedTuple):
    job: str
    description: str  # the job's own description, may be empty
    schedule: str  # the schedule as written, entries joined by " | "
    readable: str  # the schedule as a sentence
    times: tuple[datetime, ...]
    notes: tuple[str, ...]
    zone: str | None = None  # the job's `timezone`: times are in it
    marks: tuple[str, ...] = ()  # per time: what a DST change did to it, or ""
    host: tzinfo | None = None  # the host's zone, to show its reading beside
    # Targets whose firings differ from `times` (systemd beside cron or launchd, around a
    # DST change): (target, its times).
    by_target: tuple[tuple[str, tuple[datetime, ...]], ...] = ()


def next_cmd(config_path: Path, names: list[str] | None, n: int,
             host: str | None = None) -> list[Upcoming]:
    """`host`: that host's jobs (default: this machine's)."""
    return upcoming(load_here(config_path, host), names, n)


def upcoming(config: Config, names: list[str] | None, n: int,
             start: datetime | None = None) -> list[Upcoming]:
    """Next ``n`` times for the named jobs (default: every job), after ``start`` (default: now)."""
    if n < 1:
        raise UsageError("-n must be at least 1")
    if names:
        away = {s.job: s.why for s in config.skipped}
        for x in names:
            if x in away:
                raise UsageError(f"job {x} is not for host {config.host}: {away[x]} "
                                 "(--host NAME shows the times of a host it is for)")
        unknown = [x for x in names if config.job(x) is None]
        if unknown:
            known = ", ".join(j.name for j in config.jobs)
            raise UsageError(f"no job named {', '.join(map(repr, unknown))} in {config.path} "
                             f"(jobs: {known})")
        jobs = [j for name in dict.fromkeys(names) if (j := config.job(name)) is not None]
    else:
        jobs = list(config.jobs)
    when = start if start is not None else datetime.now(local_zone()).replace(microsecond=0)
    return [next_times(job, n, when, config.namespace) for job in jobs]


def policy_notes(job: Job, namespace: str, now: datetime) -> list[str]:
    """What the run policies (docs/policies.md) do to the times: pause, start delay, catch-up."""
    out = []
    p = pause.paused(namespace, job.name, now.astimezone(UTC))
    if p is not None:
        out.append(f"{p.text()} (schedgen pause): its firings are skipped")
    w = policies.window(job, namespace)
    if w is not None:
        lo, hi = (int(x.total_seconds()) for x in w)
        out.append(f"starts {format_duration(lo)} after each time (random_delay, this host's "
                   "stable offset)" if lo == hi else
                   f"starts between each time and {format_duration(hi)} after it (random_delay)")
    if job.catch_up == "once":
        out.append("a firing missed while the machine was off or asleep runs once when it is "
                   f"back, if less than {format_duration(job.max_lateness)} late (catch_up)")
    return out


def next_times(job: Job, n: int, start: datetime, namespace: str = "default") -> Upcoming:
    notes: list[str] = []
    times: tuple[datetime, ...] = ()
    host = start.tzinfo
    if job.timezone:  # read the schedule in the job's zone (cronsim applies its DST rules)
        start = start.astimezone(ZoneInfo(job.timezone))
    if not job.enabled:
        notes.append("disabled (enabled = false): it does not run")
    else:
        loads = [t for t in job.targets if registry.get(t).on_load]
        # Targets with their own reading of the clock's changes (systemd), and the rest.
        own = {t: f for t in job.targets
               if (f := registry.get(t).firings(job.schedule, n, start)) is not None}
        others = [t for t in job.targets if t not in own]
        if others:
            times, found = firings(job.schedule, n, start, launchd=bool(loads))
        else:  # only its own reading
            times, found = next(iter(own.values()))
        notes += found
        if job.run_at_load and loads:
            notes.append(f"also whenever {loads[0]} loads it (run_at_load)")
        notes += policy_notes(job, namespace, start)
    marks: tuple[str, ...] = ()
    crons = [e for e in job.schedule if isinstance(e, Cron)]
    if job.timezone and times and others:
        marks = tuple(dst_mark(t, crons) for t in times)
    by_target: tuple[tuple[str, tuple[datetime, ...]], ...] = ()
    if job.enabled and own and crons:
        if others:
            by_target = tuple((t, f.times) for t, f in own.items()
                              if [x.astimezone(UTC) for x in f.times]
                              != [x.astimezone(UTC) for x in times])
        if job.timezone and any(dst_mark(t, crons) for t in firings(crons, 4 * n, start,
                                                                     launchd=False).times):
            notes += [registry.get(t).dst_note for t in own]
    return Upcoming(job=job.name, description=job.description,
                    schedule=" | ".join(job.schedule_text),
                    readable=describe_zoned(job.schedule, job.timezone),
                    times=times, notes=tuple(notes), zone=job.timezone, marks=marks, host=host,
                    by_target=by_target)
