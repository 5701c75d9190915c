"""The generated wrappers: the shared runtime (one per wrapper_dir and namespace) and one
job file per job that sources it, shared by the launchd and cron targets.

They are installed first (plists and crontab lines call them) and removed last; the
runtime goes before the job files and is removed after the last job file that needs it.
"""

from __future__ import annotations

from pathlib import Path

from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import Artifact
from schedgen.targets.base import (
    plan_files,
    remove_file,
    settle,
    write_file,
)

_STAYS = (p.CREATE, p.UPDATE, p.UNCHANGED, p.ORPHAN, p.KEPT, p.CONFLICT, p.DISOWN)


class WrapperTarget:
    name = "wrappers"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        def targets_of(a: Artifact) -> tuple[str, ...]:
            return ctx.job_targets(a.job)

        jobs = plan_files(self.name, "wrapper", ctx.artifacts("wrapper"), ctx, targets_of)
        # A wrapper serves its job's targets: `--target cron` leaves launchd-only ones alone.
        jobs = [c for c in jobs if set(c.targets) & set(ctx.selected) or not c.targets]
        runtimes = plan_files(self.name, "runtime", ctx.artifacts("runtime"), ctx,
                              lambda a: ())
        # A runtime no job of this config wants goes with the last job file beside it
        # (the job files' folders looked at only then: a Path's parent made per job).
        if any(c.after is None for c in runtimes):
            used = {c.path.parent for c in jobs if c.path is not None and c.action in _STAYS}
            runtimes = [_unwanted_runtime(c, used) if c.after is None else c for c in runtimes]
        return [*runtimes, *jobs]

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        if settle(ctx, change):
            return
        if change.deferred:
            ctx.say(f"left alone: {change.kind} {change.path} ({change.deferred})")
            return
        if change.action in (p.CREATE, p.UPDATE):
            write_file(ctx, change)
        elif change.action == p.DELETE:
            remove_file(ctx, change)


def _unwanted_runtime(c: p.Change, used: set[Path]) -> p.Change:
    if c.action not in (p.DELETE, p.ORPHAN) or c.path is None:
        return c  # already gone, no longer ours, or hand-edited (kept)
    if c.path.parent in used:
        return c._replace(action=p.ORPHAN, note="job files still installed beside it source "
                          "it; it goes with the last of them")
    return c._replace(action=p.DELETE, note=c.note if c.action == p.DELETE else
                      "no job file beside it needs it any more")


WRAPPERS = WrapperTarget()
