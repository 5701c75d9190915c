"""`status` (also `reconcile`): per job, is it installed as the config says, and how is it doing.

Installed state and drift come from the same plan `diff` and `apply` use; the rest
(last run, queue depth, lock) is read from what the wrappers leave behind (records/).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from schedgen import paths
from schedgen.commands import scopes
from schedgen.commands.next import next_times
from schedgen.commands.status_types import JobStatus, Status
from schedgen.config import policies
from schedgen.config.model import Config, Job
from schedgen.config.select import is_elsewhere, load_here
from schedgen.machine import ownership as state
from schedgen.machine import pause
from schedgen.outcomes.missed import Installs, missed
from schedgen.plan import changes as p
from schedgen.plan.build import build
from schedgen.records import runs
from schedgen.render import wordcache
from schedgen.schedule.expressions import Every
from schedgen.schedule.upcoming import local_zone
from schedgen.schedule.when import machine
from schedgen.targets import registry
from schedgen.targets.registry import all_targets
from schedgen.units import format_duration


def status(config_path: Path, targets: tuple[str, ...] | None = None,
           now: datetime | None = None, host: str | None = None) -> Status:
    """`host`: the jobs for that host (default: this machine); for another machine only
    what the config says can be known (`elsewhere`). Each scope is read on its own."""
    config = load_here(config_path, host)
    now = now or datetime.now(local_zone())
    if is_elsewhere(host):
        return _elsewhere(config, targets, now, tuple((s.job, s.why) for s in config.skipped))
    found = scopes.of(config)
    scopes.check_selected(config, found, targets)
    parts = scopes.each(config, found, lambda part: _status(part, targets, now))
    if len(parts) == 1:
        return parts[0]
    return parts[0]._replace(jobs=tuple(j for s in parts for j in s.jobs),
                   other=tuple(o for s in parts for o in s.other),
                   warnings=tuple(w for s in parts for w in s.warnings),
                   unknown=tuple(u for s in parts for u in s.unknown))


def _status(config: Config, targets: tuple[str, ...] | None, now: datetime) -> Status:
    """One scope's jobs (the config given holds them only)."""
    skipped = tuple((s.job, s.why) for s in config.skipped)
    record = state.load(config.namespace)
    plan = build(config, record, all_targets(), selected=targets, review=True)
    # The schedules in words kept between runs: an in-sync plan renders nothing, so the
    # template environment that reads them is not made.
    wordcache.load(paths.cache_dir())
    by_job = _by_job(plan, config.jobs)  # one pass: a per-job scan made status quadratic
    installs = Installs(record)  # the same for the record's entries
    jobs = tuple(_job(job, by_job.get(job.name, []), now, config.namespace)._replace(
                         missed=missed(job, record, now, installs=installs))
                 for job in config.jobs)
    for name in registry.names():  # each target adds the facts of its own it knows
        mine = [c for c in plan.changes if c.target == name]
        if mine and registry.get(name).facts:
            jobs = registry.get(name).with_facts(jobs, mine, config.namespace)
    names = {j.name for j in config.jobs}
    other = tuple(f"{c.kind} {c.where}: {c.action} ({c.note})" for c in plan.changes
                  if c.pending and not (c.job in names or set(c.jobs) & names))
    return Status(config.namespace, jobs, other, plan.warnings, plan.unknown, config.host,
                  skipped)


def _elsewhere(config: Config, targets: tuple[str, ...] | None, now: datetime,
               skipped: tuple[tuple[str, str], ...]) -> Status:
    """Another machine's jobs: what it gets and when they fire, installed state unknown
    (this machine cannot read that machine's crontab, plists or run records)."""
    jobs = []
    for job in config.jobs:
        wanted = tuple(t for t in job.targets if not targets or t in targets)
        if targets and not wanted:
            continue
        upcoming = next_times(job, 1, now)
        jobs.append(JobStatus(
            job=job.name, enabled=job.enabled, targets=wanted,
            schedule=" | ".join(job.schedule_text), readable=upcoming.readable,
            installed=None, drift=(), last_run=None,
            next_run=machine(upcoming.times[0]) if upcoming.times else None,
            next_notes=upcoming.notes, queue=None, lock_held=None, timezone=job.timezone,
            user=job.user))
    return Status(config.namespace, tuple(jobs), (), (), (), config.host, skipped, True)


def unknown(config_path: Path) -> tuple[tuple[str, str], ...]:
    """(target, why) for each scheduler of the config that cannot be read here."""
    config = load_here(config_path)
    return tuple(u for unknown in scopes.each(config, None, lambda part: build(
        part, state.load(part.namespace), all_targets(), review=True).unknown) for u in unknown)


def _by_job(plan: p.Plan, jobs: tuple[Job, ...]) -> dict[str, list[p.Change]]:
    out: dict[str, list[p.Change]] = {}
    for c in plan.changes:
        # A target's change may hold several jobs (the crontab block): it splits it.
        parts = (registry.get(c.target).job_changes(c, jobs) if c.target in registry.names()
                 else {c.job: c} if c.job else {})
        for j, part in parts.items():
            out.setdefault(j, []).append(part)
    return out


def _job(job: Job, changes: list[p.Change], now: datetime, namespace: str = "default") -> JobStatus:
    drift: list[str] = []
    installed: bool | None = True
    unknown = False
    for c in changes:
        if c.unknown:  # not seen: neither installed nor drift
            unknown = True
            continue
        if job.enabled and c.before is None:
            installed = False
        if c.pending:
            drift.append(_words(c, job))
    if job.enabled and not changes:
        installed = False  # e.g. --target excludes all of its targets
    if installed and unknown:
        installed = None
    upcoming = next_times(job, 1, now, namespace)
    next_run = machine(upcoming.times[0]) if upcoming.times else None
    notes = upcoming.notes
    every = next((e for e in job.schedule if isinstance(e, Every)), None)
    if every is not None:  # under some schedulers it counts from a load or a run, not the clock
        words = next((w for t in registry.names() if t in job.targets
                      and (w := registry.get(t).every_words)), "")
        if words:
            next_run = None
            notes = (words.format(every=every.text, interval=format_duration(every.seconds)),)
    return JobStatus(
        job=job.name, enabled=job.enabled, targets=job.targets,
        schedule=" | ".join(job.schedule_text), readable=upcoming.readable,
        installed=installed if job.enabled else False, drift=tuple(drift),
        last_run=runs.last_run(job),
        next_run=next_run, next_notes=notes, queue=runs.queue_depth(job), lock_held=runs.lock_held(job),
        timezone=job.timezone, user=job.user, paused=pause.paused(namespace, job.name, now),
        policies=policies.as_json(job), policy_words=policies.words(job),
    )


def _words(c: p.Change, job: Job) -> str:
    target = registry.get(c.target) if c.target in registry.names() else None
    what = target.kind_words(c.kind) if target is not None else c.kind
    own = target.drift_notes.get(c.note) if target is not None else None
    if c.deferred and c.action == p.UNCHANGED:
        return f"{what}: reload pending ({c.deferred})"
    if not job.enabled and not (target is not None and target.keeps_disabled):
        return f"{what}: still installed although the job is disabled"
    if c.action == p.CREATE:
        return f"{what}: missing"
    if own is not None and c.action == p.UPDATE:
        return f"{what}: {own}"
    if c.action == p.UPDATE:
        return f"{what}: {'hand-edited' if c.edited else 'differs from the config'}"
    return f"{what}: {c.action}" + (f" ({c.note})" if c.note else "")
