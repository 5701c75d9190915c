"""Carry out a plan change by change, each through its target and machine.ops.

Installs run in target order (wrappers, plists, crontab), removals in reverse, so a
plist or crontab line never points at a wrapper that is not there. When a step fails
before any plist, unit or crontab block changed, the job files and runtimes already
written are put back as they were (the common case: `crontab -` refused the new block,
and the job files must not run the new commands on the old schedule); what cannot be
put back is listed. The ownership record is saved once, atomically, after the steps
(also when one fails: then it records what the disk holds), so an apply stays linear in
the number of jobs.

INT, TERM and HUP during an apply are held until the step in progress ends (a crontab or
launchctl call is never cut off halfway, so what it did is known), then end the apply as
a failed step would: put back what can be, the record saved, exit 128 + N.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from schedgen.errors import Interrupted, SystemOpError
from schedgen.machine import ownership
from schedgen.machine.ops import Ops
from schedgen.plan.changes import CREATE, DELETE, UPDATE, Change, Plan
from schedgen.plan.context import ApplyContext, Planner

Say = Callable[[str], None]


def execute(plan: Plan, record: ownership.Record, targets: Sequence[Planner], ops: Ops,
            force: bool, say: Say,
            prepare: Callable[[ApplyContext], None] | None = None,
            after: Callable[[ApplyContext], None] | None = None) -> tuple[str, ...]:
    by_name = {t.name: t for t in targets}
    ctx = ApplyContext(record=record, ops=ops, force=force, say=say)
    for w in plan.warnings:
        say(f"warning: {w}")
    installs = [c for c in plan.changes if c.action != DELETE]
    removals = [c for c in reversed(plan.changes) if c.action == DELETE]
    steps = [*installs, *removals]
    before = (dict(record.entries), record.settings)
    step = 0
    files: list[tuple[Change, int | None]] = []  # the file steps begun, to undo on failure

    def save() -> None:
        """Once, after the steps: the record as the disk now is (saving per step made
        apply quadratic in the number of jobs)."""
        if after is not None:
            after(ctx)  # a dry run's too: it says what it would do (the record is not saved)
        if ops.dry_run:
            return
        if (record.entries, record.settings) != before:
            ownership.save(record)

    try:
        with _held_signals() as held:
            for name in dict.fromkeys(c.target for c in steps):
                check = getattr(by_name[name], "preflight", None)
                if check is not None:
                    check(steps, ctx)  # e.g. no systemd user manager: fail before any write
            if prepare is not None:
                prepare(ctx)
            _stop_if(held)
            for step, change in enumerate(steps):  # noqa: B007 (used after the loop on failure)
                if change.target == "wrappers" and change.action in _UNDOABLE:
                    # A file not there at planning has no mode to put back (no stat).
                    files.append((change, None if change.before is None
                                  else _mode(change.path)))
                if change.target != "wrappers":
                    ops.flush_early()  # the job files written so far, while this one reads
                by_name[change.target].apply(change, ctx)
                if held:
                    step += 1  # this one is done: the failure comes after it
                    _stop_if(held)
    except SystemOpError as exc:
        # Once a plist, unit or crontab block changed, the job files it calls stay as they
        # are now: put back, they would run old commands on the new schedule.
        undone: list[str] = []
        kept: list[str] = []
        if not any(c.target != "wrappers" and (c.action in _UNDOABLE or c.reload)
                   for c in steps[:step]):
            # The step that failed wrote nothing (a file is replaced whole or not at all).
            failed = steps[step] if step < len(steps) else None
            undone, kept = _undo([f for f in files if f[0] is not failed], ops, record,
                                 before[0])
        save()
        err = SystemOpError(_failure(str(exc), ctx.done, steps[step:], undone, kept))
        err.exit_code = exc.exit_code
        raise err from None
    except BaseException:
        save()  # interrupted (^C, a bug): the record still says what was done
        raise
    save()
    return tuple(ctx.done)


_UNDOABLE = (CREATE, UPDATE, DELETE)
_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _held_signals() -> Iterator[list[int]]:
    """The signals that came meanwhile, noted, not acted on (main thread only: elsewhere
    Python cannot set handlers, and they stay as they are)."""
    held: list[int] = []
    try:
        old = {s: signal.signal(s, lambda n, _f: held.append(n)) for s in _HELD}
    except ValueError:  # not the main thread (the first one set fails: none is set)
        yield held
        return
    try:
        yield held
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    _stop_if(held)  # one that came during the last step or the save


def _stop_if(held: list[int]) -> None:
    if held:
        raise Interrupted(held[0], signal.Signals(held[0]).name)


def _mode(path: Path | None) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777 if path is not None else None
    except OSError:
        return None


def _undo(files: list[tuple[Change, int | None]], ops: Ops, record: ownership.Record,
          entries: dict[str, ownership.Installed]) -> tuple[list[str], list[str]]:
    """Put the job files and runtimes this apply wrote back as they were, newest first."""
    undone: list[str] = []
    kept: list[str] = []
    for c, mode in reversed(files):
        assert c.path is not None
        try:
            if c.before is None:
                ops.remove(c.path)
            else:
                ops.write(c.path, c.before, mode if mode is not None else c.mode)
        except SystemOpError as exc:
            kept.append(f"{c.kind} {c.path}: {exc}")
            continue
        old = entries.get(c.key)
        if old is None:
            record.drop(c.key)
        else:
            record.set(old)
        undone.append(f"{c.action} {c.kind} {c.path}")
    return undone, kept


def _failure(error: str, done: list[str], left: list[Change], undone: list[str],
             kept: list[str]) -> str:
    lines = [error, "", "Done before the failure:"]
    lines += [f"  {d}" for d in done] or ["  nothing"]
    if undone:
        lines += ["Put back as it was:"] + [f"  {u}" for u in undone]
    if kept:
        lines += ["Could not be put back:"] + [f"  {k}" for k in kept]
    lines += ["Not done:"]
    lines += [f"  {c.action} {c.kind} {c.where}" for c in left if c.pending] or ["  nothing"]
    return "\n".join(lines)
