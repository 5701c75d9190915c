"""The generated bash wrappers: one file per job, shared by the launchd and cron targets.

They are installed first (plists and crontab lines call them) and removed last.
"""

from __future__ import annotations

from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import Artifact
from schedgen.targets.base import (
    plan_files,
    remove_file,
    settle,
    write_file,
)


class WrapperTarget:
    name = "wrappers"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        def targets_of(a: Artifact) -> tuple[str, ...]:
            return ctx.job_targets(a.job)

        changes = plan_files(self.name, "wrapper", ctx.artifacts("wrapper"), ctx, targets_of)
        # A wrapper serves its job's targets: `--target cron` leaves launchd-only ones alone.
        return [c for c in changes if set(c.targets) & set(ctx.selected) or not c.targets]

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        if settle(ctx, change):
            return
        if change.deferred:
            ctx.say(f"left alone: wrapper {change.path} ({change.deferred})")
            return
        if change.action in (p.CREATE, p.UPDATE):
            write_file(ctx, change)
        elif change.action == p.DELETE:
            remove_file(ctx, change)
