"""`status` (also `reconcile`): per job, is it installed as the config says, and how is it doing.

Installed state and drift come from the same plan `diff` and `apply` use; the rest
(last run, queue depth, lock) is read from what the wrappers leave behind (records/).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from schedgen.commands.next import next_times
from schedgen.config import load as cfg
from schedgen.config.model import Job
from schedgen.machine import ownership as state
from schedgen.plan import changes as p
from schedgen.plan.build import build
from schedgen.records import runs
from schedgen.render.artifacts import cron_command
from schedgen.schedule.expressions import Every
from schedgen.schedule.upcoming import local_zone
from schedgen.targets.registry import all_targets
from schedgen.units import format_duration


@dataclass(frozen=True)
class JobStatus:
    job: str
    enabled: bool
    targets: tuple[str, ...]
    schedule: str
    readable: str  # the schedule in words (schedgen.schedule.describe)
    installed: bool  # every artifact the job needs is there
    drift: tuple[str, ...]  # how the machine differs from the config for this job
    launchd: dict[str, Any] | None  # label, loaded, pid, last_exit
    last_run: dict[str, Any] | None
    next_run: str | None  # ISO 8601, local time
    next_notes: tuple[str, ...]
    queue: runs.QueueDepth | None
    lock_held: bool | None


@dataclass(frozen=True)
class Status:
    namespace: str
    jobs: tuple[JobStatus, ...]
    other: tuple[str, ...]  # drift not tied to a job in the config (orphans)

    @property
    def drifted(self) -> bool:
        return bool(self.other) or any(j.drift for j in self.jobs)


def status(config_path: Path, targets: tuple[str, ...] | None = None) -> Status:
    config = cfg.load(config_path)
    plan = build(config, state.load(config.namespace), all_targets(), selected=targets)
    now = datetime.now(local_zone())
    jobs = tuple(_job(job, plan, now) for job in config.jobs)
    names = {j.name for j in config.jobs}
    other = tuple(f"{c.kind} {c.where}: {c.action} ({c.note})" for c in plan.changes
                  if c.pending and not (c.job in names or set(c.jobs) & names))
    return Status(config.namespace, jobs, other)


def _job(job: Job, plan: p.Plan, now: datetime) -> JobStatus:
    changes = plan.for_job(job.name)
    drift: list[str] = []
    installed = True
    launchd = None
    for c in changes:
        part = _cron_part(c, job) if c.kind == "cron" else c
        if part is None:
            continue
        if job.enabled and part.before is None:
            installed = False
        if part.pending:
            drift.append(_words(part, job))
        if c.kind == "plist":
            launchd = {"label": c.label, "loaded": c.loaded, "pid": c.pid,
                       "last_exit": c.last_exit}
    if job.enabled and not changes:
        installed = False  # e.g. --target excludes all of its targets
    upcoming = next_times(job, 1, now)
    next_run = upcoming.times[0].isoformat() if upcoming.times else None
    notes = upcoming.notes
    every = next((e for e in job.schedule if isinstance(e, Every)), None)
    if every is not None and "launchd" in job.targets:
        # StartInterval counts from when launchd loaded the job: no calendar time to show.
        next_run = None
        notes = (f"{every.text}: launchd runs it every {format_duration(every.seconds)} after "
                 "it is loaded (StartInterval); there is no calendar time",)
    return JobStatus(
        job=job.name, enabled=job.enabled, targets=job.targets,
        schedule=" | ".join(job.schedule_text), readable=upcoming.readable,
        installed=installed and job.enabled, drift=tuple(drift), launchd=launchd,
        last_run=runs.last_run(job),
        next_run=next_run, next_notes=notes, queue=runs.queue_depth(job), lock_held=runs.lock_held(job),
    )


def _cron_part(c: p.Change, job: Job) -> p.Change | None:
    """The job's own lines of the crontab block, as a change of their own."""
    token = cron_command(job)

    def mine(text: str | None) -> str | None:
        return "".join(line for line in (text or "").splitlines(keepends=True)
                       if line.rstrip("\n").endswith(token)) or None

    before, after = mine(c.before), mine(c.after)
    if before is None and after is None:
        return None
    if before == after:
        action = p.UNCHANGED
    else:
        action = p.CREATE if before is None else (p.DELETE if after is None else p.UPDATE)
    if c.action in (p.ORPHAN, p.KEPT):
        action = c.action
    return p.Change("cron", "cron", c.key, action, None, before, after, job=job.name,
                    note=c.note, edited=c.edited)


def _words(c: p.Change, job: Job) -> str:
    what = "crontab lines" if c.kind == "cron" else c.kind
    if c.deferred and c.action == p.UNCHANGED:
        return f"{what}: reload pending ({c.deferred})"
    if not job.enabled:
        return f"{what}: still installed although the job is disabled"
    if c.action == p.CREATE:
        return f"{what}: missing"
    if c.action == p.UPDATE and c.note == "not loaded in launchd":
        return f"{what}: not loaded"
    if c.action == p.UPDATE:
        return f"{what}: {'hand-edited' if c.edited else 'differs from the config'}"
    return f"{what}: {c.action}" + (f" ({c.note})" if c.note else "")

