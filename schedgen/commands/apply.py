"""`diff`, `apply` and `uninstall`: build one plan, then (apply, uninstall) carry it out.

All three read the same plan (schedgen.plan.build) with the same options, so `diff`
and `apply --dry-run` say exactly what `apply` does; schedgen.plan.execute runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from schedgen import paths
from schedgen.commands import scopes
from schedgen.config import hostile
from schedgen.config import load as cfg
from schedgen.config.model import Config
from schedgen.config.select import load_here
from schedgen.errors import SchedgenError
from schedgen.machine import ownership as state
from schedgen.machine.ops import DryOps, Ops
from schedgen.plan import changes as p
from schedgen.plan import metrics_exports, review, system_dirs
from schedgen.plan.build import build
from schedgen.plan.context import ApplyContext
from schedgen.plan.execute import execute
from schedgen.render.artifacts import storing_compiled_templates
from schedgen.targets.registry import all_targets

Say = Callable[[str], None]


class Outcome(NamedTuple):
    plan: p.Plan
    done: tuple[str, ...]
    dry_run: bool


def diff(config_path: Path, targets: tuple[str, ...] | None = None, *, prune: bool = False,
         force: bool = False) -> p.Plan:
    """The plan `apply` with the same options would carry out; changes nothing."""
    config = load_here(config_path)
    return merged(scopes.each(config, None, lambda part: build(
        part, state.load(part.namespace), all_targets(), selected=targets, prune=prune,
        force=force, review=True)))


def merged(plans: list[p.Plan]) -> p.Plan:
    """The plans of a config's scopes as one (each was built and is carried out alone)."""
    if len(plans) == 1:
        return plans[0]
    return p.Plan(plans[0].namespace, tuple(c for x in plans for c in x.changes),
                  tuple(w for x in plans for w in x.warnings),
                  tuple(u for x in plans for u in x.unknown))


def apply(config_path: Path, targets: tuple[str, ...] | None = None, *, dry_run: bool = False,
          prune: bool = False, force: bool = False, say: Say = print) -> Outcome:
    # A bad config stops here: nothing touched. The jobs whose `hosts` leave this machine
    # out are wanted nowhere here: what they left installed is removed.
    config = load_here(config_path)
    found = scopes.of(config)
    if not dry_run:
        scopes.require_root(config, found, "apply")
    scopes.check_selected(config, found, targets)
    outcomes = scopes.each(config, found, lambda part: _apply(
        part, targets, dry_run=dry_run, prune=prune, force=force, say=say))
    return Outcome(merged([o.plan for o in outcomes]), tuple(d for o in outcomes for d in o.done),
                   dry_run)


def _apply(config: Config, targets: tuple[str, ...] | None = None, *, dry_run: bool = False,
           prune: bool = False, force: bool = False, say: Say = print) -> Outcome:
    with _lock(dry_run, say), _storing(not dry_run):
        record = state.load(config.namespace)
        record.config = str(config.path)
        plan = build(config, record, all_targets(), selected=targets, prune=prune, force=force)
        conflicts = [c for c in plan.changes if c.action == p.CONFLICT]
        if conflicts:
            raise SchedgenError("nothing was changed: schedgen would overwrite files it did not "
                                "write for this namespace:\n"
                                + "\n".join(f"  {c.where} ({c.note})" for c in conflicts)
                                + "\nMove them away, or run apply --force to overwrite them.")
        ops = DryOps() if dry_run else Ops()
        done = execute(plan, record, all_targets(), ops, force,
                       say, lambda ctx: _log_dirs(config, plan, ctx),
                       lambda ctx: _finish(ops, lambda: _remember(config, plan, record, ctx)))
    return Outcome(plan, done, dry_run)


def uninstall(config_path: Path, namespace: str | None = None, *, dry_run: bool = False,
              say: Say = print) -> Outcome:
    """Remove everything schedgen installed for the namespace; logs and runs stay."""
    if namespace is not None:
        try:
            hostile.namespace_name(namespace)
        except ValueError as exc:
            raise SchedgenError(f"--namespace {exc}") from None
    if namespace is None:  # the config's: its system install only if it made it
        loaded = cfg.load(config_path)
        ns = loaded.namespace
        found = tuple(s for s in paths.SCOPES
                      if s == paths.USER or scopes.left(loaded.path, ns, s))
    else:  # the namespace named: all of it
        ns = namespace
        found = tuple(s for s in paths.SCOPES if s == paths.USER or scopes.recorded(ns, s))
    if not dry_run and paths.SYSTEM in found:
        scopes.require_root(Config(Path(config_path), ns, ()), found, "uninstall")
    outcomes = []
    for scope in found:
        with paths.in_scope(scope):
            outcomes.append(_uninstall(ns, dry_run=dry_run, say=say))
    return Outcome(merged([o.plan for o in outcomes]), tuple(d for o in outcomes for d in o.done),
                   dry_run)


def _uninstall(ns: str, *, dry_run: bool, say: Say) -> Outcome:
    with _lock(dry_run, say):
        record = state.load(ns)
        plan = build(None, record, all_targets(), uninstall=True)
        ops = DryOps() if dry_run else Ops()
        done = execute(plan, record, all_targets(), ops, True, say,
                       after=lambda ctx: _finish(ops, lambda: _forget_settings(record, ctx)))
    return Outcome(plan, done, dry_run)


def _finish(ops: Ops, then: Callable[[], None]) -> None:
    """After the last step, before the record is saved: the files written since the last
    command that changed the machine (an apply that only changed job files) put in place."""
    ops.commit()
    then()


def _remember(config: Config, plan: p.Plan, record: state.Record, ctx: ApplyContext) -> None:
    before = record.settings
    review.remember(config, plan, record)
    metrics_exports.remove(record.namespace, before, record.settings, ctx.did,
                           lambda w: ctx.say(f"warning: {w}"), dry_run=ctx.ops.dry_run)


def _forget_settings(record: state.Record, ctx: ApplyContext) -> None:
    """Keep the settings only of jobs that still have something installed (and take the
    metrics files of the others out of their metrics_dir)."""
    left = {e.job for e in record.entries.values() if e.job}
    left |= {j for e in record.entries.values() for j in e.jobs}
    if record.settings is not None:
        before = record.settings
        record.settings = {k: v for k, v in record.settings.items() if k in left}
        metrics_exports.remove(record.namespace, before, record.settings, ctx.did,
                               lambda w: ctx.say(f"warning: {w}"), dry_run=ctx.ops.dry_run)


@contextmanager
def _storing(store: bool) -> Iterator[None]:
    """A real apply keeps the templates it compiles; a dry run writes nothing."""
    if store:
        with storing_compiled_templates():
            yield
    else:
        yield


@contextmanager
def _lock(dry_run: bool, say: Say) -> Iterator[None]:
    if dry_run:
        yield
    else:
        with state.apply_lock(say):
            yield


def _log_dirs(config: Config, plan: p.Plan, ctx: ApplyContext) -> None:
    """A launchd job gets its log dir now: launchd opens StandardOutPath before the
    wrapper runs, and fails the job if the directory is missing. Cron's and systemd's
    runs make theirs (the runtime's `mkdir -p` at the start of a run); a CronJob logs
    in the cluster. A system job's folders are made now, whatever its target: its run,
    as its user, may not create them (system_dirs)."""
    if paths.system():
        system_dirs.prepare(config, plan, ctx)
    jobs = {c.job for c in plan.changes if c.after is not None and c.job and c.kind == "plist"}
    by_name = {j.name: j for j in config.jobs}
    for name in sorted(jobs):
        job = by_name.get(name)
        if job is not None and not job.log_dir.is_dir():
            ctx.ops.mkdir(job.log_dir)
            ctx.did("create", f"log dir {job.log_dir}")

