"""`status` (also `reconcile`): per job, is it installed as the config says, and how is it doing.

Installed state and drift come from the same plan `diff` and `apply` use; the rest
(last run, queue depth, lock) is read from what the wrappers leave behind (records/).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from schedgen.commands.next import next_times
from schedgen.commands.status_types import JobStatus, Status
from schedgen.config import load as cfg
from schedgen.config.model import Job
from schedgen.machine import ownership as state
from schedgen.outcomes.missed import missed
from schedgen.plan import changes as p
from schedgen.plan import selected
from schedgen.plan.build import build
from schedgen.records import runs
from schedgen.render.artifacts import cron_command
from schedgen.schedule.expressions import Every
from schedgen.schedule.upcoming import local_zone
from schedgen.targets.registry import all_targets
from schedgen.targets.systemd_status import NOT_ARMED, systemd_part
from schedgen.units import format_duration


def status(config_path: Path, targets: tuple[str, ...] | None = None,
           now: datetime | None = None) -> Status:
    config = cfg.load(config_path)
    record = state.load(config.namespace)
    selected.check(config, record, targets)
    plan = build(config, record, all_targets(), selected=targets, review=True)
    now = now or datetime.now(local_zone())
    by_job = _by_job(plan, config.jobs)  # one pass: a per-job scan made status quadratic
    jobs = tuple(replace(_job(job, by_job.get(job.name, []), now),
                         missed=missed(job, record, now)) for job in config.jobs)
    if any(c.kind == "cronjob" for c in plan.changes):
        # The cluster's side only for configs with CronJobs (tests/test_layout.py: LAZY_EDGES).
        from schedgen.commands.status_kubernetes import with_cluster

        jobs = with_cluster(jobs, plan, config.namespace)
    names = {j.name for j in config.jobs}
    other = tuple(f"{c.kind} {c.where}: {c.action} ({c.note})" for c in plan.changes
                  if c.pending and not (c.job in names or set(c.jobs) & names))
    return Status(config.namespace, jobs, other, plan.warnings)


def _by_job(plan: p.Plan, jobs: tuple[Job, ...]) -> dict[str, list[p.Change]]:
    tokens = {cron_command(j): j.name for j in jobs}
    out: dict[str, list[p.Change]] = {}
    for c in plan.changes:
        if c.kind == "cron":
            for j, part in _cron_parts(c, tokens).items():
                out.setdefault(j, []).append(part)
        elif c.job:
            out.setdefault(c.job, []).append(c)
    return out


def _job(job: Job, changes: list[p.Change], now: datetime) -> JobStatus:
    drift: list[str] = []
    installed = True
    launchd = None
    systemd: dict[str, Any] | None = None
    for c in changes:
        part = c
        if job.enabled and part.before is None:
            installed = False
        if part.pending:
            drift.append(_words(part, job))
        if c.kind == "plist":
            launchd = {"label": c.label, "loaded": c.loaded, "pid": c.pid,
                       "last_exit": c.last_exit}
        if c.target == "systemd":
            systemd = systemd_part(systemd, c)
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
    elif every is not None and "systemd" in job.targets:
        next_run = None  # OnUnitActiveSec counts from the last run's start, not the clock
        notes = (f"{every.text}: systemd runs it every {format_duration(every.seconds)} from "
                 "the timer's start, then from each run's start; there is no calendar time",)
    return JobStatus(
        job=job.name, enabled=job.enabled, targets=job.targets,
        schedule=" | ".join(job.schedule_text), readable=upcoming.readable,
        installed=installed and job.enabled, drift=tuple(drift), launchd=launchd,
        last_run=runs.last_run(job),
        next_run=next_run, next_notes=notes, queue=runs.queue_depth(job), lock_held=runs.lock_held(job),
        systemd=systemd,
    )


def _cron_parts(c: p.Change, tokens: dict[str, str]) -> dict[str, p.Change]:
    """Each job's own lines of the crontab block, as changes of their own (one pass).
    A line belongs to the job whose command (render's cron_command) ends it."""
    def lines(text: str | None) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in p.table_lines(text or ""):
            body = line.rstrip("\n")
            # `<5 fields or @macro> <token>`: look the token up, never scan them all
            five, one = body.split(" ", 5), body.split(" ", 1)
            name = tokens.get(five[-1]) if len(five) == 6 else None
            name = name or (tokens.get(one[-1]) if len(one) == 2 else None)
            if name is not None:
                out[name] = out.get(name, "") + line
        return out

    before, after = lines(c.before), lines(c.after)
    out = {}
    for job in dict.fromkeys([*before, *after]):
        b, a = before.get(job), after.get(job)
        if b == a:
            action = p.UNCHANGED
        else:
            action = p.CREATE if b is None else (p.DELETE if a is None else p.UPDATE)
        if c.action in (p.ORPHAN, p.KEPT):
            action = c.action
        out[job] = p.Change("cron", "cron", c.key, action, None, b, a, job=job,
                            note=c.note, edited=c.edited)
    return out


def _words(c: p.Change, job: Job) -> str:
    what = "crontab lines" if c.kind == "cron" else c.kind
    if c.deferred and c.action == p.UNCHANGED:
        return f"{what}: reload pending ({c.deferred})"
    if not job.enabled and c.kind != "cronjob":  # a disabled job's CronJob stays, suspended
        return f"{what}: still installed although the job is disabled"
    if c.action == p.CREATE:
        return f"{what}: missing"
    if c.action == p.UPDATE and c.note == "not loaded in launchd":
        return f"{what}: not loaded"
    if c.action == p.UPDATE and c.note == NOT_ARMED:
        return f"{what}: {c.note}"
    if c.action == p.UPDATE:
        return f"{what}: {'hand-edited' if c.edited else 'differs from the config'}"
    return f"{what}: {c.action}" + (f" ({c.note})" if c.note else "")

