"""`diff`, `apply` and `uninstall`: build the plan, then carry it out change by change.

Installs run in target order (wrappers, plists, crontab), removals in reverse, so a
plist or crontab line never points at a wrapper that is not there. The ownership
record is saved once, atomically, after the steps (also when one fails: then it
records what was actually done), so an apply stays linear in the number of jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from schedgen.config import hostile
from schedgen.config import load as cfg
from schedgen.config.model import Config
from schedgen.errors import SchedgenError, SystemOpError
from schedgen.machine import ownership as state
from schedgen.machine.ops import DryOps, Ops
from schedgen.plan import changes as p
from schedgen.plan import review, selected
from schedgen.render.artifacts import keep_compiled_templates
from schedgen.targets.base import ApplyContext, target_by_name

Say = Callable[[str], None]


class Outcome(NamedTuple):
    plan: p.Plan
    done: tuple[str, ...]
    dry_run: bool


def diff(config_path: Path, targets: tuple[str, ...] | None = None, *, prune: bool = False,
         force: bool = False) -> p.Plan:
    """The plan `apply` with the same options would carry out; changes nothing."""
    config = cfg.load(config_path)
    return p.build(config, state.load(config.namespace), selected=targets, prune=prune,
                   force=force, review=True)


def apply(config_path: Path, targets: tuple[str, ...] | None = None, *, dry_run: bool = False,
          prune: bool = False, force: bool = False, say: Say = print) -> Outcome:
    config = cfg.load(config_path)  # a bad config stops here: nothing touched
    if not dry_run:
        keep_compiled_templates()
    with _lock(dry_run, say):
        record = state.load(config.namespace)
        record.config = str(config.path)
        selected.check(config, record, targets)
        plan = p.build(config, record, selected=targets, prune=prune, force=force)
        conflicts = [c for c in plan.changes if c.action == p.CONFLICT]
        if conflicts:
            raise SchedgenError("nothing was changed: schedgen would overwrite files it did not "
                                "write for this namespace:\n"
                                + "\n".join(f"  {c.where} ({c.note})" for c in conflicts)
                                + "\nMove them away, or run apply --force to overwrite them.")
        done = _execute(plan, record, DryOps() if dry_run else Ops(), force, say,
                        lambda ctx: _log_dirs(config, plan, ctx),
                        lambda: review.remember(config, plan, record))
    return Outcome(plan, done, dry_run)


def uninstall(config_path: Path, namespace: str | None = None, *, dry_run: bool = False,
              say: Say = print) -> Outcome:
    """Remove everything schedgen installed for the namespace; logs and runs stay."""
    if namespace is not None:
        try:
            hostile.namespace_name(namespace)
        except ValueError as exc:
            raise SchedgenError(f"--namespace {exc}") from None
    ns = namespace or cfg.load(config_path).namespace
    with _lock(dry_run, say):
        record = state.load(ns)
        plan = p.build(None, record, uninstall=True)
        done = _execute(plan, record, DryOps() if dry_run else Ops(), True, say,
                        after=lambda: _forget_settings(record))
    return Outcome(plan, done, dry_run)


def _forget_settings(record: state.Record) -> None:
    """Keep the settings only of jobs that still have something installed."""
    left = {e.job for e in record.entries.values() if e.job}
    left |= {j for e in record.entries.values() for j in e.jobs}
    if record.settings is not None:
        record.settings = {k: v for k, v in record.settings.items() if k in left}


@contextmanager
def _lock(dry_run: bool, say: Say) -> Iterator[None]:
    if dry_run:
        yield
    else:
        with state.apply_lock(say):
            yield


def _log_dirs(config: Config, plan: p.Plan, ctx: ApplyContext) -> None:
    """Every installed job gets its log dir now: launchd opens StandardOutPath before
    the wrapper runs, and fails the job if the directory is missing."""
    jobs = {c.job for c in plan.changes if c.after is not None and c.job}
    jobs |= {j for c in plan.changes if c.after is not None for j in c.jobs}
    by_name = {j.name: j for j in config.jobs}
    for name in sorted(jobs):
        job = by_name.get(name)
        if job is not None and not job.log_dir.is_dir():
            ctx.ops.mkdir(job.log_dir)
            ctx.did("create", f"log dir {job.log_dir}")


def _execute(plan: p.Plan, record: state.Record, ops: Ops, force: bool, say: Say,
             prepare: Callable[[ApplyContext], None] | None = None,
             after: Callable[[], None] | None = None) -> tuple[str, ...]:
    ctx = ApplyContext(record=record, ops=ops, force=force, say=say)
    for w in plan.warnings:
        say(f"warning: {w}")
    installs = [c for c in plan.changes if c.action != p.DELETE]
    removals = [c for c in reversed(plan.changes) if c.action == p.DELETE]
    steps = [*installs, *removals]
    before = (dict(record.entries), record.settings)
    step = 0

    def save() -> None:
        """Once, after the steps: the record as the disk now is (saving per step made
        apply quadratic in the number of jobs)."""
        if ops.dry_run:
            return
        if after is not None:
            after()
        if (record.entries, record.settings) != before:
            state.save(record)

    try:
        if prepare is not None:
            prepare(ctx)
        for step, change in enumerate(steps):  # noqa: B007 (used after the loop on failure)
            target_by_name(change.target).apply(change, ctx)
    except SystemOpError as exc:
        save()
        raise SystemOpError(_failure(str(exc), ctx.done, steps[step:])) from None
    except BaseException:
        save()  # interrupted (^C, a bug): the record still says what was done
        raise
    save()
    return tuple(ctx.done)


def _failure(error: str, done: list[str], left: list[p.Change]) -> str:
    lines = [error, "", "Done before the failure (the ownership record says so too):"]
    lines += [f"  {d}" for d in done] or ["  nothing"]
    lines += ["Not done:"]
    lines += [f"  {c.action} {c.kind} {c.where}" for c in left if c.pending] or ["  nothing"]
    return "\n".join(lines)
