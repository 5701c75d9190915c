"""Carry out a plan change by change, each through its target and machine.ops.

Installs run in target order (wrappers, plists, crontab), removals in reverse, so a
plist or crontab line never points at a wrapper that is not there. The ownership
record is saved once, atomically, after the steps (also when one fails: then it
records what was actually done), so an apply stays linear in the number of jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedgen.errors import SystemOpError
from schedgen.machine import ownership
from schedgen.machine.ops import Ops
from schedgen.plan.changes import DELETE, Change, Plan
from schedgen.plan.context import ApplyContext, Target

Say = Callable[[str], None]


def execute(plan: Plan, record: ownership.Record, targets: Sequence[Target], ops: Ops,
            force: bool, say: Say,
            prepare: Callable[[ApplyContext], None] | None = None,
            after: Callable[[], None] | None = None) -> tuple[str, ...]:
    by_name = {t.name: t for t in targets}
    ctx = ApplyContext(record=record, ops=ops, force=force, say=say)
    for w in plan.warnings:
        say(f"warning: {w}")
    installs = [c for c in plan.changes if c.action != DELETE]
    removals = [c for c in reversed(plan.changes) if c.action == DELETE]
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
            ownership.save(record)

    try:
        for name in dict.fromkeys(c.target for c in steps):
            check = getattr(by_name[name], "preflight", None)
            if check is not None:
                check(steps, ctx)  # e.g. no systemd user manager: fail before any write
        if prepare is not None:
            prepare(ctx)
        for step, change in enumerate(steps):  # noqa: B007 (used after the loop on failure)
            by_name[change.target].apply(change, ctx)
    except SystemOpError as exc:
        save()
        raise SystemOpError(_failure(str(exc), ctx.done, steps[step:])) from None
    except BaseException:
        save()  # interrupted (^C, a bug): the record still says what was done
        raise
    save()
    return tuple(ctx.done)


def _failure(error: str, done: list[str], left: list[Change]) -> str:
    lines = [error, "", "Done before the failure (the ownership record says so too):"]
    lines += [f"  {d}" for d in done] or ["  nothing"]
    lines += ["Not done:"]
    lines += [f"  {c.action} {c.kind} {c.where}" for c in left if c.pending] or ["  nothing"]
    return "\n".join(lines)
