"""`next [JOB...] [-n N]`: the next firing times of each job, with the schedule in words."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from schedgen.config import load as cfg
from schedgen.config.model import Config, Job
from schedgen.errors import UsageError
from schedgen.schedule.describe import describe_entries
from schedgen.schedule.upcoming import firings, local_zone


@dataclass(frozen=True)
class Upcoming:
    job: str
    description: str  # the job's own description, may be empty
    schedule: str  # the schedule as written, entries joined by " | "
    readable: str  # the schedule as a sentence
    times: tuple[datetime, ...]
    notes: tuple[str, ...]


def next_cmd(config_path: Path, names: list[str] | None, n: int) -> list[Upcoming]:
    return upcoming(cfg.load(config_path), names, n)


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
    times: tuple[datetime, ...] = ()
    if not job.enabled:
        notes.append("disabled (enabled = false): it does not run")
    else:
        launchd = "launchd" in job.targets
        times, found = firings(job.schedule, n, start, launchd=launchd)
        notes += found
        if job.run_at_load and launchd:
            notes.append("also whenever launchd loads it (run_at_load)")
    return Upcoming(job=job.name, description=job.description,
                    schedule=" | ".join(job.schedule_text), readable=describe_entries(job.schedule),
                    times=times, notes=tuple(notes))
