"""`status` (also `reconcile`): per job, is it installed as the config says, and how is it doing.

Installed state and drift come from the same plan `diff` and `apply` use; the rest
(last run, queue depth, lock) is read from what the wrappers leave behind (runs.py).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from schedgen import config as cfg
from schedgen import plan as p
from schedgen import runs, state
from schedgen.model import Job
from schedgen.nexttimes import local_zone, next_times
from schedgen.outcomes.missed import Missed, missed, missed_json, missed_text
from schedgen.render import cron_escape
from schedgen.schedule import Every
from schedgen.units import format_duration


@dataclass(frozen=True)
class JobStatus:
    job: str
    enabled: bool
    targets: tuple[str, ...]
    schedule: str
    readable: str  # the schedule in words (schedgen.describe)
    installed: bool  # every artifact the job needs is there
    drift: tuple[str, ...]  # how the machine differs from the config for this job
    launchd: dict[str, Any] | None  # label, loaded, pid, last_exit
    last_run: dict[str, Any] | None
    next_run: str | None  # ISO 8601, local time
    next_notes: tuple[str, ...]
    queue: runs.QueueDepth | None
    lock_held: bool | None
    missed: Missed | None = None  # firings with no run (schedgen.outcomes.missed)


@dataclass(frozen=True)
class Status:
    namespace: str
    jobs: tuple[JobStatus, ...]
    other: tuple[str, ...]  # drift not tied to a job in the config (orphans)

    @property
    def drifted(self) -> bool:
        return bool(self.other) or any(j.drift for j in self.jobs)


def status(config_path: Path, targets: tuple[str, ...] | None = None,
           now: datetime | None = None) -> Status:
    config = cfg.load(config_path)
    record = state.load(config.namespace)
    plan = p.build(config, record, selected=targets)
    now = now or datetime.now(local_zone())
    jobs = tuple(replace(_job(job, plan, now), missed=missed(job, record, now))
                 for job in config.jobs)
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
    token = cron_escape(shlex.quote(str(job.wrapper_path))) + " --cron"
    mine = lambda text: "".join(l for l in (text or "").splitlines(keepends=True)  # noqa: E731,E741
                                if l.rstrip("\n").endswith(token)) or None
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


def as_json(s: Status) -> dict[str, Any]:
    return {
        "namespace": s.namespace, "drift": s.drifted, "other": list(s.other),
        "jobs": [{
            "job": j.job, "enabled": j.enabled, "targets": list(j.targets),
            "schedule": j.schedule, "readable": j.readable, "installed": j.installed,
            "drift": list(j.drift), "launchd": j.launchd, "last_run": j.last_run,
            "next_run": j.next_run, "next_notes": list(j.next_notes),
            "queue": j.queue.__dict__ if j.queue else None, "lock_held": j.lock_held,
            "missed": missed_json(j.missed),
        } for j in s.jobs],
    }


def as_text(s: Status) -> str:
    lines = [f"namespace {s.namespace}: {'DRIFT' if s.drifted else 'in sync'}"]
    for j in s.jobs:
        state_ = ("disabled" if not j.enabled else "installed" if j.installed else "not installed")
        lines.append(f"{j.job}  [{', '.join(j.targets)}]  {state_}")
        lines.append(f"  schedule   {j.schedule}  ({j.readable})")
        if j.launchd:
            ld = j.launchd
            running = f"running, PID {ld['pid']}" if ld["pid"] else "not running"
            loaded = "loaded" if ld["loaded"] else "not loaded"
            last = f", last exit {ld['last_exit']}" if ld["last_exit"] is not None else ""
            lines.append(f"  launchd    {ld['label']}: {loaded}, {running}{last}")
        lr = j.last_run
        if lr:
            when = lr.get("finished_at") or lr.get("started_at") or "?"
            code = f", exit {lr['exit_code']}" if lr.get("exit_code") is not None else ""
            outcome = lr.get("outcome", "?")
            lines.append(f"  last run   {lr.get('run_id')}: {outcome}{code} at {when}")
        else:
            lines.append("  last run   never")
        nxt = j.next_run or "no calendar time"
        lines.append(f"  next run   {nxt}" + "".join(f"; {n}" for n in j.next_notes))
        if j.queue:
            q = j.queue
            lines.append(f"  queue      {q.inbox} waiting, {q.processing} processing, "
                         f"{q.failed} failed")
        if j.lock_held is not None:
            lines.append(f"  lock       {'held (a run is active)' if j.lock_held else 'free'}")
        if j.missed and j.missed.firings:
            lines.append(f"  firings    {missed_text(j.missed)}")
        for d in j.drift:
            lines.append(f"  drift      {d}")
    lines += [f"drift: {o}" for o in s.other]
    return "\n".join(lines)
